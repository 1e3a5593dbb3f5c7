package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/workspace"
)

// Ls is the `ls` tool: one directory's entries with kind and size, in
// pages (REFERENCE.md §2.7).
type Ls struct{ ws *workspace.Workspace }

func (*Ls) Name() string { return "ls" }
func (*Ls) Description() string {
	return "List one workspace directory (not recursive): each entry's kind (file, dir, link or unknown), size in bytes and name " +
		"(directories end with /), sorted by name. path defaults to the workspace root. Pages of limit entries (default 200, maximum 1000); " +
		"when more remain, pass the cursor from the output exactly. Use glob to find files recursively."
}
func (*Ls) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"Directory relative to the workspace root. Default: the root."},` +
		`"limit":{"type":"integer","minimum":1,"description":"Page size (default 200, maximum 1000; larger values are clamped)."},` +
		`"cursor":{"type":"string","description":"Opaque: copy it exactly from the previous call; omit for the first page."}},` +
		`"additionalProperties":false,"examples":[{},{"path":"src"},{"path":"src","limit":50,"cursor":"50"}]}`)
}
func (*Ls) Capabilities(json.RawMessage) kernel.Capabilities { return kernel.ReadOnlyPaginated(16) }

func (l *Ls) Execute(ctx context.Context, call *kernel.Call) (*kernel.Result, error) {
	var a struct {
		Path   *string `json:"path"`
		Limit  *int    `json:"limit"`
		Cursor *string `json:"cursor"`
	}
	if err := decodeArgs("ls", call.Args, &a); err != nil {
		return nil, err
	}
	pg, err := parsePage("ls", a.Limit, a.Cursor)
	if err != nil {
		return nil, err
	}
	dir := "."
	if a.Path != nil && *a.Path != "" {
		if dir, err = workspace.Resolve(*a.Path); err != nil {
			return nil, &workspace.PathError{Op: "ls", Path: *a.Path, Err: err}
		}
	}
	entries, err := l.ws.ReadDir(ctx, dir)
	if errors.Is(err, workspace.ErrNotDir) {
		return nil, kernel.InvalidArgument("ls: %s is a file, not a directory (use read to see its content)", workspace.Display(dir))
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, notFound("ls", "directory", dir, err)
	}
	if err != nil {
		return nil, asOp("ls", err)
	}
	hidden := 0
	if call != nil && call.Hidden != nil { // what the permission policy keeps from this call
		kept := make([]workspace.Entry, 0, len(entries))
		for _, e := range entries {
			if call.Hidden(workspace.Join(dir, e.Name)) {
				hidden++
				continue
			}
			kept = append(kept, e)
		}
		entries = kept
	}
	lo, hi, err := pg.window("ls", len(entries))
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	list := make([]map[string]any, 0, hi-lo)
	if len(entries) == 0 {
		fmt.Fprintf(&b, "(%s is empty)\n", workspace.Display(dir))
	}
	for _, e := range entries[lo:hi] {
		name := workspace.Display(e.Name)
		size := fmt.Sprint(e.Size)
		if e.Kind == workspace.KindDir {
			name += "/"
			size = "-"
		}
		fmt.Fprintf(&b, "%-4s %10s  %s\n", e.Kind, size, name)
		list = append(list, map[string]any{"name": e.Name, "kind": string(e.Kind), "size": e.Size})
	}
	if len(entries) > 0 {
		b.WriteString(pg.footer("entries") + "\n")
	}
	out, cut := boundOutput(b.String(), "use a smaller limit")
	meta := map[string]any{"path": dir, "entries": list, "page": pg.meta(), "output_truncated": cut}
	if hidden > 0 {
		meta["hidden_by_policy"] = hidden
	}
	return kernel.OK(out, meta), nil
}
