package llmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/a3s-lab/code-wasm/internal/fetch"
)

// Remote drives a running server at URL (in this process or the helper
// binary's) over HTTP, so the same test code runs natively and under
// js/wasm.
type Remote struct{ URL string }

// Loaded is a script on the server: its id and the baseURL a client of its
// provider uses (llm.Config.BaseURL).
type Loaded struct {
	ID      string `json:"id"`
	BaseURL string `json:"baseURL"`
}

// Load sends sc to the server.
func (r Remote) Load(ctx context.Context, sc Script) (Loaded, error) {
	body, err := json.Marshal(sc)
	if err != nil {
		return Loaded{}, err
	}
	var l Loaded
	err = r.call(ctx, "POST", "/scripts", body, &l)
	return l, err
}

// Log reads the log of script id, first waiting up to waitMs for at least
// disconnects disconnects.
func (r Remote) Log(ctx context.Context, id string, disconnects, waitMs int) (Log, error) {
	var l Log
	err := r.call(ctx, "GET", fmt.Sprintf("/scripts/%s/log?disconnects=%d&waitMs=%d", id, disconnects, waitMs), nil, &l)
	return l, err
}

func (r Remote) call(ctx context.Context, method, path string, body []byte, out any) error {
	res, err := fetch.Do(ctx, &fetch.Request{Method: method, URL: r.URL + path, Header: map[string]string{"content-type": "application/json"}, Body: body})
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.Status != 200 {
		return fmt.Errorf("llmtest %s %s: %d %s", method, path, res.Status, bytes.TrimSpace(b))
	}
	return json.Unmarshal(b, out)
}
