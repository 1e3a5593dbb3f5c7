package fetch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/internal/fetch"
	"github.com/a3s-lab/code-wasm/llm/llmtest"
)

// TestNoNetHTTPInWasm: the wasm build and the llm package reach HTTP
// through this seam only; net/http would add 1.7 MB gzip (FIELD-NOTES.md).
func TestNoNetHTTPInWasm(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("needs the go command")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	cmd := exec.Command(goBin, "list", "-deps", "../../wasm", "../../llm", ".")
	cmd.Env = append(cmd.Environ(), "GOOS=js", "GOARCH=wasm")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed %d packages", len(deps))
	}
	for _, p := range deps {
		if p == "net/http" || p == "crypto/tls" {
			t.Errorf("the wasm build imports %s", p)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	url := llmtest.ServerURL(t)
	ctx := context.Background()
	// A POST with a body and headers, a JSON answer.
	res, err := fetch.Do(ctx, &fetch.Request{Method: "POST", URL: url + "/scripts",
		Header: map[string]string{"Content-Type": "application/json"},
		Body:   []byte(`{"provider":"openai","replies":[{"end":"stall","header":{"Retry-After-Ms":"1, 2,3","X-Request-Id":"r,1"},"events":[{"text":"a"}]}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || res.Status != 200 {
		t.Fatalf("status %d, %v", res.Status, err)
	}
	// (A page sees only the CORS-safelisted and exposed headers.)
	if !strings.HasPrefix(res.Header()["content-type"], "application/json") {
		t.Fatalf("headers %v", res.Header())
	}
	var l llmtest.Loaded
	if err := json.Unmarshal(b, &l); err != nil || l.ID == "" {
		t.Fatalf("body %s: %v", b, err)
	}
	// An error status is an answer, not an error.
	res, err = fetch.Do(ctx, &fetch.Request{URL: url + "/nowhere"})
	if err != nil || res.Status != 404 {
		t.Fatalf("GET /nowhere: %v, %v", res, err)
	}
	res.Body.Close()

	// A streaming body: the first event arrives while the server holds the
	// stream open; cancelling the context ends the read with its error.
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	res, got := firstEvent(t, sctx, l.BaseURL)
	if !strings.HasPrefix(string(got), "data: {") {
		t.Fatalf("stream began %q", got)
	}
	// Names in lower case; a value keeps its commas (the js side splits a
	// field at its name's end only).
	if res.Header()["retry-after-ms"] != "1, 2,3" || res.Header()["x-request-id"] != "r,1" || !strings.HasPrefix(res.Header()["content-type"], "text/event-stream") {
		t.Fatalf("stream headers %q", res.Header())
	}
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	buf, err := make([]byte, 4096), error(nil)
	for err == nil {
		_, err = res.Body.Read(buf)
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("read after cancel: %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("the read ended %v after the cancel", d)
	}
	res.Body.Close()
	lg, err := llmtest.Remote{URL: url}.Log(ctx, l.ID, 1, 3000)
	if err != nil || lg.Disconnects != 1 {
		t.Fatalf("server saw %d disconnects (%v)", lg.Disconnects, err)
	}
}

func TestErrors(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := fetch.Do(ctx, &fetch.Request{URL: "http://127.0.0.1:1/"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	if _, err := fetch.Do(context.Background(), &fetch.Request{URL: "ftp://x/"}); err == nil || !strings.Contains(err.Error(), "not an http(s) URL") {
		t.Fatalf("ftp: %v", err)
	}
	// Nothing listens on port 2 (not a port fetch blocks): a network error,
	// not a context error.
	_, err := fetch.Do(context.Background(), &fetch.Request{URL: "http://127.0.0.1:2/"})
	if err == nil || errors.Is(err, context.Canceled) {
		t.Fatalf("refused connection: %v", err)
	}
	t.Logf("refused connection: %v", err)
}

// A body larger than a read's buffer, in chunks larger than the last one,
// arrives whole and in order.
func TestLargeBody(t *testing.T) {
	url := llmtest.ServerURL(t)
	ctx := context.Background()
	var text strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&text, "%05d ", i)
	}
	script, _ := json.Marshal(map[string]any{"provider": "openai", "replies": []any{map[string]any{"events": []any{
		map[string]any{"text": "small"}, map[string]any{"text": text.String()}, map[string]any{"text": "end"}}}}})
	res, err := fetch.Do(ctx, &fetch.Request{Method: "POST", URL: url + "/scripts", Body: script})
	if err != nil {
		t.Fatal(err)
	}
	var l llmtest.Loaded
	err = json.NewDecoder(res.Body).Decode(&l)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	res, err = fetch.Do(ctx, &fetch.Request{Method: "POST", URL: l.BaseURL + "/chat/completions",
		Header: map[string]string{"content-type": "application/json", "authorization": "Bearer k"},
		Body:   []byte(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)})
	if err != nil || res.Status != 200 {
		t.Fatalf("stream: %v %v", res, err)
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	i, j, k := strings.Index(string(b), `"small"`), strings.Index(string(b), text.String()), strings.Index(string(b), `"end"`)
	if i < 0 || j < i || k < j || !strings.HasSuffix(string(b), "data: [DONE]\n\n") {
		t.Fatalf("a %d-byte body arrived out of order or in part (%d %d %d): ...%q", len(b), i, j, k, b[max(0, len(b)-80):])
	}
}

// TestCloseWhileReading: a Close from another goroutine ends a read that
// waits on a held stream, with no context cancelled.
func TestCloseWhileReading(t *testing.T) {
	url := llmtest.ServerURL(t)
	ctx := context.Background()
	res, err := fetch.Do(ctx, &fetch.Request{Method: "POST", URL: url + "/scripts",
		Body: []byte(`{"provider":"openai","replies":[{"end":"stall","events":[{"text":"a"}]}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	var l llmtest.Loaded
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if err := json.Unmarshal(b, &l); err != nil {
		t.Fatalf("body %s: %v", b, err)
	}
	res, _ = firstEvent(t, ctx, l.BaseURL)
	buf := make([]byte, 4096)
	done := make(chan error, 1)
	go func() {
		var err error
		for err == nil {
			_, err = res.Body.Read(buf)
		}
		done <- err
	}()
	time.Sleep(50 * time.Millisecond) // the read waits on the held stream
	res.Body.Close()
	select {
	case err := <-done:
		t.Logf("the waiting read ended with %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("a read waiting on the stream did not end after Close")
	}
}

// firstEvent starts a streaming chat completion on the scripted server at
// base and reads until its first event has arrived, which it returns with
// the open response.
func firstEvent(t *testing.T, ctx context.Context, base string) (*fetch.Response, []byte) {
	t.Helper()
	res, err := fetch.Do(ctx, &fetch.Request{Method: "POST", URL: base + "/chat/completions",
		Header: map[string]string{"content-type": "application/json", "authorization": "Bearer k"},
		Body:   []byte(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)})
	if err != nil || res.Status != 200 {
		t.Fatalf("stream: %v %v", res, err)
	}
	buf := make([]byte, 4096)
	var got []byte
	for !strings.Contains(string(got), "\n\n") {
		n, err := res.Body.Read(buf)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		got = append(got, buf[:n]...)
	}
	return res, got
}

// TestRedirects: a request follows redirects as Fetch does: 307 and 308
// send the method and body again, through a chain of them; 303 turns a
// POST into a GET. Under Node the request first goes in mode "error" (its
// body not teed) and is sent again when undici refuses the redirect; this
// is the path it takes there. NoRedirect hands back the redirect itself.
func TestRedirects(t *testing.T) {
	url := llmtest.ServerURL(t)
	ctx := context.Background()
	script := []byte(`{"provider":"openai","replies":[{"events":[{"text":"a"}]}]}`)
	var id string
	for _, path := range []string{"/redirect/307/scripts", "/redirect/308/scripts", "/redirect/307/redirect/308/redirect/307/scripts"} {
		res, err := fetch.Do(ctx, &fetch.Request{Method: "POST", URL: url + path,
			Header: map[string]string{"content-type": "application/json"}, Body: script})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var l llmtest.Loaded
		err = json.NewDecoder(res.Body).Decode(&l)
		res.Body.Close()
		if res.Status != 200 || err != nil || l.ID == "" || !strings.Contains(l.BaseURL, l.ID) {
			t.Fatalf("%s: status %d, %+v, %v", path, res.Status, l, err)
		}
		id = l.ID
	}
	// 303: the POST becomes a GET of the log (a POST there has no route).
	res, err := fetch.Do(ctx, &fetch.Request{Method: "POST", URL: url + "/redirect/303/scripts/" + id + "/log", Body: []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.Status != 200 || !strings.Contains(string(b), `"requests"`) {
		t.Fatalf("303: status %d, %s", res.Status, b)
	}
	res, err = fetch.Do(ctx, &fetch.Request{Method: "POST", URL: url + "/redirect/307/scripts", Body: script, NoRedirect: true})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	// A browser answers a manual redirect with an opaque one: status 0, no
	// fields (fetch.go); Node and native Go hand back the redirect itself.
	opaque := runtime.GOOS == "js" && res.Status == 0 && res.Header()["location"] == ""
	if !opaque && (res.Status != 307 || res.Header()["location"] != "/scripts") {
		t.Fatalf("NoRedirect: status %d, location %q", res.Status, res.Header()["location"])
	}
	// A redirect to a missing page answers that page's 404.
	res, err = fetch.Do(ctx, &fetch.Request{Method: "POST", URL: url + "/redirect/307/nowhere", Body: script})
	if err != nil {
		t.Fatalf("a redirect to a 404: %v", err)
	}
	b, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.Status != 404 || !strings.Contains(string(b), "no route POST /nowhere") {
		t.Fatalf("a redirect to a 404: status %d, %s", res.Status, b)
	}
}
