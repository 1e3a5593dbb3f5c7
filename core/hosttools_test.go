package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/tools"
)

type lookupIn struct {
	ID int `json:"id"`
}

type lookupOut struct {
	Name string `json:"name"`
}

var lookupSchema = json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"],"additionalProperties":false}`)

func TestHostTools(t *testing.T) {
	s, err := core.New(core.Options{Governance: kernel.Governance{Permission: kernel.PermissionPolicy{Deny: []string{"write"}, Allow: []string{"*"}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()

	ok := func(ctx context.Context, _ *kernel.Call, in lookupIn) (lookupOut, error) {
		return lookupOut{Name: "user" + string(rune('0'+in.ID))}, nil
	}
	for _, name := range []string{"read", "mcp__x__y", "bad name", ""} {
		tool, err := tools.NewHostTool(name, "", lookupSchema, ok)
		if err == nil {
			err = s.RegisterTool(tool)
		}
		if err == nil {
			t.Errorf("%q was registered", name)
		}
	}
	if _, err := tools.NewHostTool("lookup", "", json.RawMessage(`{"type":"objekt"}`), ok); err == nil || !strings.Contains(err.Error(), "do not compile") {
		t.Errorf("a bad schema: %v", err)
	}

	lookup, err := tools.NewHostTool("lookup_user", "Looks a user up.", lookupSchema, ok)
	if err != nil || s.RegisterTool(lookup) != nil {
		t.Fatal(err)
	}
	res, _ := s.Tool(ctx, "lookup_user", map[string]any{"id": 7})
	if res.ExitCode != 0 || res.Output != `{"name":"user7"}` || res.Metadata["structured"].(map[string]any)["name"] != "user7" {
		t.Errorf("lookup_user: %+v", res)
	}
	res, _ = s.Tool(ctx, "lookup_user", map[string]any{"id": "x"})
	if res.ExitCode != 1 || res.ErrorKind == nil || res.ErrorKind.Type != kernel.ErrInvalidArgument {
		t.Errorf("bad args reached the handler: %+v", res)
	}

	throws, _ := tools.NewHostTool("throws", "", nil, func(context.Context, *kernel.Call, struct{}) (string, error) {
		return "", errors.New("backend is down")
	})
	s.RegisterTool(throws)
	res, _ = s.Tool(ctx, "throws", nil)
	if res.ExitCode != 1 || res.Output != "backend is down" {
		t.Errorf("throwing handler: %+v", res)
	}

	// A trusted host call of the tool does not make its nested calls
	// trusted: the policy denying write denies the nested write.
	nested, _ := tools.NewHostTool("writer", "", nil, func(ctx context.Context, call *kernel.Call, _ struct{}) (string, error) {
		r := call.Invoker.Invoke(ctx, "write", json.RawMessage(`{"file_path":"a.txt","content":"x"}`))
		if r.ExitCode != 0 {
			return "", errors.New("nested write: " + r.Output)
		}
		return "wrote", nil
	})
	s.RegisterTool(nested)
	res, _ = s.Tool(ctx, "writer", nil)
	if res.ExitCode != 1 || !strings.Contains(res.Output, "nested write") {
		t.Errorf("nested write was not denied: %+v", res)
	}
	if _, err := s.ReadFile(ctx, "a.txt", core.ReadOptions{}); err == nil {
		t.Error("a.txt was written")
	}

	if !s.UnregisterTool("lookup_user") || s.UnregisterTool("read") || s.UnregisterTool("lookup_user") {
		t.Error("unregisterTool")
	}
	if strings.Contains(strings.Join(s.ToolNames(), " "), "lookup_user") {
		t.Error("lookup_user still listed")
	}
}
