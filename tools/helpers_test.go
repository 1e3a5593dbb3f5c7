package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/internal/testkit"
	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/workspace"
)

// newWS builds a memory workspace holding files.
var newWS = testkit.Workspace

// toolByName returns the built-in tool of that name over ws.
func toolByName(t testing.TB, ws *workspace.Workspace, name string) kernel.Tool {
	t.Helper()
	for _, tl := range Builtins(ws) {
		if tl.Name() == name {
			return tl
		}
	}
	t.Fatalf("no built-in tool %q", name)
	return nil
}

// run calls a tool directly as the kernel would and folds an error into a
// failed Result with its kind.
func run(t testing.TB, ws *workspace.Workspace, name string, args any) *kernel.Result {
	t.Helper()
	raw, ok := args.(string)
	var b []byte
	if ok {
		b = []byte(raw)
	} else {
		var err error
		if b, err = json.Marshal(args); err != nil {
			t.Fatal(err)
		}
	}
	tl := toolByName(t, ws, name)
	res, err := tl.Execute(context.Background(), &kernel.Call{Name: name, Args: b})
	if err != nil {
		return kernel.Failure(name, err)
	}
	if res == nil {
		t.Fatalf("%s returned nil result and nil error", name)
	}
	return res
}

func fileContent(t testing.TB, ws *workspace.Workspace, p string) (string, bool) {
	t.Helper()
	b, _, err := ws.ReadFile(context.Background(), p)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// snapshot captures every file so a test can check that a rejected call
// changed nothing.
var snapshot = testkit.Snapshot

var kindOf = testkit.KindOf

// metaJSON round-trips metadata through JSON, as hosts see it.
func metaJSON(t testing.TB, r *kernel.Result) map[string]any {
	t.Helper()
	b, err := json.Marshal(r.Metadata)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func callOf(name string, args []byte) *kernel.Call { return &kernel.Call{Name: name, Args: args} }

func kernelKind(err error) string {
	if k := kernel.KindOf(err); k != nil {
		return string(k.Type)
	}
	return ""
}

func isDecodeError(err error) bool {
	s := err.Error()
	return strings.Contains(s, "unknown argument") || strings.Contains(s, "must be a") || strings.Contains(s, "must be an")
}

// clip shortens s to 80 bytes for a failure message.
func clip(s string) string {
	if len(s) > 80 {
		return cutUTF8(s, 80) + "…"
	}
	return s
}

var searchFiles = map[string]string{
	"main.go":           "package main\n\nfunc main() {\n\tprintln(\"Hello\")\n}\n",
	"lib/util.go":       "package lib\n\n// TODO: tidy\nfunc Helper() int { return 1 }\nfunc other() {}\n",
	"lib/util_test.go":  "package lib\n\nfunc TestHelper() {}\n",
	"web/app.ts":        "export function hello() {}\n",
	"web/view.tsx":      "export const View = () => null // hello\n",
	"web/style.css":     "body { color: red }\n",
	"docs/readme.md":    "Hello docs\nsecond line\nthird\nfourth hello\n",
	"bin/blob.bin":      "hello\x00binary\n",
	"crlf.txt":          "hello\r\nworld\r\n",
	".hidden/secret.go": "package hidden // hello\n",
}
