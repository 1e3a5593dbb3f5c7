package tools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/tools/internal/udiff"
	"github.com/a3s-lab/code-wasm/workspace"
)

// Patch is the `patch` tool: a strict unified-diff applier (REFERENCE.md §2.4).
type Patch struct{ ws *workspace.Workspace }

func (*Patch) Name() string { return "patch" }
func (*Patch) Description() string {
	return "Apply a unified diff (the format `diff -u` prints) to one workspace file. " +
		"Lines before the first `@@ -a,b +c,d @@` header (such as ---/+++) are ignored; after it, every line must be a hunk header, " +
		"a body line starting with ' ' (context), '-' (remove) or '+' (add), or `\\ No newline at end of file`. " +
		"Hunks apply top to bottom; context and removed lines must match the file exactly (no fuzz, no offset search) and the " +
		"declared line counts must equal the body. A hunk with context before its changes but none after must end at the end of the file " +
		"(as in git apply). Use @@ -0,0 +1,N @@ to fill an empty file. One file per call: a diff of several files is refused. " +
		"Lines apply byte for byte, line endings included, as git apply does; a diff without any CR on a file whose lines all end in " +
		"CRLF is read as CRLF lines (read shows lines without their CR). If a hunk does not match, re-read the " +
		"file and rebuild the diff, or use edit for small exact-string changes."
}
func (*Patch) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"file_path":{"type":"string","minLength":1,"description":"Workspace-relative path of the file to patch. It must exist (create it empty with write first)."},` +
		`"diff":{"type":"string","minLength":1,"description":"Unified diff text with @@ -a,b +c,d @@ hunk headers."}},` +
		`"required":["file_path","diff"],"additionalProperties":false,` +
		`"examples":[{"file_path":"src/main.go","diff":"--- a/src/main.go\n+++ b/src/main.go\n@@ -1,3 +1,3 @@\n package main\n-var x = 1\n+var x = 2\n func main() {}\n"}]}`)
}
func (*Patch) Capabilities(json.RawMessage) kernel.Capabilities {
	c := kernel.Conservative()
	c.OutputKind = kernel.OutputDiff
	return c
}

// Effects: patch mutates, and matches every context and removed line
// against the file (a mismatch quotes the file's line), so the read rules
// govern it as a read.
func (*Patch) Effects(json.RawMessage) kernel.Effects {
	return kernel.Effects{Mutates: true, ReadsContent: true}
}

func (p *Patch) Execute(ctx context.Context, call *kernel.Call) (*kernel.Result, error) {
	var a struct {
		FilePath *string `json:"file_path"`
		Diff     *string `json:"diff"`
	}
	if err := decodeArgs("patch", call.Args, &a); err != nil {
		return nil, err
	}
	if a.FilePath == nil || *a.FilePath == "" {
		return nil, kernel.InvalidArgument("patch: file_path is required")
	}
	if a.Diff == nil || *a.Diff == "" {
		return nil, kernel.InvalidArgument("patch: diff is required (unified diff text with @@ hunk headers)")
	}
	name, err := workspace.ResolveFile("patch", *a.FilePath)
	if err != nil {
		return nil, err
	}
	before, ver, err := p.ws.ReadFile(ctx, name)
	if err != nil {
		return nil, asOp("patch", err)
	}
	after, hunks, err := udiff.Apply(before, *a.Diff)
	if err != nil {
		return nil, kernel.InvalidArgument("patch %s: %v", workspace.Display(name), err)
	}
	if _, err := p.ws.WriteFileIfVersion(ctx, name, after, ver); err != nil {
		return nil, asOp("patch", err)
	}
	meta := map[string]any{"file_path": name, "hunks": hunks, "before_bytes": len(before), "after_bytes": len(after)}
	changeMeta(meta, name, before, after, true)
	out := fmt.Sprintf("Applied %d hunk(s) to %s", hunks, workspace.Display(name))
	if udiff.CRLFTranslated(before, *a.Diff) {
		meta["crlf_translated"] = true
		out += " (the diff's lines had no CR; they were applied as the file's CRLF lines)"
	}
	return kernel.OK(out, meta), nil
}
