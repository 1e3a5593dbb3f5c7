package core

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/tools"
	"github.com/a3s-lab/code-wasm/workspace"
)

// The exact-content calls (API.md "Workspace content"): the application's
// own access to the files, beside the tools' numbered, bounded output.
// Each is one trusted host call through the kernel (Kernel.InvokeHost),
// named after its session method: hooks see its paths and may block it,
// the budget guard is asked, timeouts apply and the events show it. The
// bytes travel beside the call, never in its arguments, output or events.

// MaxPageBytes bounds one page of ExportPage and one batch of ImportFiles:
// the content one kernel call moves (a single larger file moves alone).
const MaxPageBytes = 8 << 20

// contentOp is one exact-content call as the kernel sees it.
type contentOp struct {
	name   string
	schema string
	read   bool // read-only: no workspace change
	paths  func(args json.RawMessage) []string
	run    func(ctx context.Context, args json.RawMessage) (string, error)
}

func (o *contentOp) Name() string                { return o.name }
func (o *contentOp) Description() string         { return "session." + o.name + " (host call)" }
func (o *contentOp) Parameters() json.RawMessage { return json.RawMessage(o.schema) }

// SchemaBuiltin: the content calls' schemas are fixed at build time
// (kernel.BuiltinSchema).
func (o *contentOp) SchemaBuiltin() {}
func (o *contentOp) Capabilities(json.RawMessage) kernel.Capabilities {
	if o.read {
		return kernel.ParallelSafeRead(4)
	}
	return kernel.Conservative()
}

// Touches names the call's paths, for hook matchers and rules.
func (o *contentOp) Touches(args json.RawMessage) kernel.Touched {
	return kernel.Touched{Paths: o.paths(args)}
}

func (o *contentOp) Execute(ctx context.Context, c *kernel.Call) (*kernel.Result, error) {
	out, err := o.run(ctx, c.Args)
	if err != nil {
		return nil, err
	}
	return &kernel.Result{Output: out}, nil
}

// pathArgs are the arguments of the one-file calls.
type pathArgs struct {
	Path  string `json:"path"`
	Bytes *int   `json:"bytes,omitempty"`
}

const pathSchema = `{"type":"object","properties":{"path":{"type":"string","minLength":1},"bytes":{"type":"integer","minimum":0}},"required":["path"],"additionalProperties":false}`

func onePath(args json.RawMessage) []string {
	var a pathArgs
	_ = json.Unmarshal(args, &a)
	return []string{a.Path}
}

// host runs op through the kernel; a failed call is a *ToolError.
func (s *Session) host(ctx context.Context, op *contentOp, args any) (*kernel.Result, error) {
	raw, err := toRaw(args)
	if err != nil {
		return nil, err
	}
	res, err := s.k.InvokeHost(ctx, op, raw)
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 {
		return res, &ToolError{Result: res}
	}
	return res, nil
}

// readOp reads one file's bytes into *out.
func (s *Session) readOp(name string, out *[]byte) *contentOp {
	return &contentOp{name: name, schema: pathSchema, read: true, paths: onePath,
		run: func(ctx context.Context, args json.RawMessage) (string, error) {
			var a pathArgs
			if err := json.Unmarshal(args, &a); err != nil {
				return "", err
			}
			data, err := s.ws.ReadData(ctx, a.Path)
			if err != nil {
				return "", err
			}
			if name == "readText" && !utf8.Valid(data) {
				return "", kernel.InvalidArgument("readText: %s is not UTF-8 text (%d bytes); read it with readBytes", workspace.Display(a.Path), len(data))
			}
			*out = data
			return fmt.Sprintf("read %d bytes from %s", len(data), a.Path), nil
		}}
}

// ReadText returns a file's exact content, which must be UTF-8 (else a
// *ToolError naming ReadBytes). Unlike ReadFile it is not numbered, cut or
// bounded.
func (s *Session) ReadText(ctx context.Context, path string) (string, error) {
	var data []byte
	if _, err := s.host(ctx, s.readOp("readText", &data), pathArgs{Path: path}); err != nil {
		return "", err
	}
	return string(data), nil
}

// ReadBytes returns a copy of a file's exact bytes.
func (s *Session) ReadBytes(ctx context.Context, path string) ([]byte, error) {
	var data []byte
	if _, err := s.host(ctx, s.readOp("readBytes", &data), pathArgs{Path: path}); err != nil {
		return nil, err
	}
	return bytes.Clone(data), nil
}

// ReadShared is ReadBytes without the copy, for hosts that copy the bytes
// out at once (the JS boundary): the slice must not be modified.
func (s *Session) ReadShared(ctx context.Context, method, path string) ([]byte, error) {
	if method != "readText" && method != "readBytes" {
		return nil, fmt.Errorf("ReadShared: method must be readText or readBytes, got %q", method)
	}
	var data []byte
	if _, err := s.host(ctx, s.readOp(method, &data), pathArgs{Path: path}); err != nil {
		return nil, err
	}
	return data, nil
}

// WriteBytes replaces (or creates) a file with data, exactly. Like
// WriteFile it returns the result; a failure is a result with ExitCode 1.
// data is kept by the workspace: do not modify it after the call.
func (s *Session) WriteBytes(ctx context.Context, path string, data []byte) (*kernel.Result, error) {
	n := len(data)
	op := &contentOp{name: "writeBytes", schema: pathSchema, paths: onePath,
		run: func(ctx context.Context, args json.RawMessage) (string, error) {
			var a pathArgs
			if err := json.Unmarshal(args, &a); err != nil {
				return "", err
			}
			// PutFile: the version (a SHA-256 of the content) is computed
			// only when a read or a compare-and-swap first needs it.
			if err := s.ws.PutFile(ctx, a.Path, data); err != nil {
				return "", err
			}
			return fmt.Sprintf("wrote %d bytes to %s", n, a.Path), nil
		}}
	res, err := s.host(ctx, op, pathArgs{Path: path, Bytes: &n})
	if _, failed := err.(*ToolError); failed {
		return res, nil
	}
	return res, err
}

const importSchema = `{"type":"object","properties":{"paths":{"type":"array","items":{"type":"string","minLength":1}}},"required":["paths"],"additionalProperties":false}`

func importPaths(args json.RawMessage) []string {
	var a struct {
		Paths []string `json:"paths"`
	}
	_ = json.Unmarshal(args, &a)
	return a.Paths
}

// ImportFiles writes files (path → content) in path order, in batches of
// about MaxPageBytes, each one kernel call (importFiles) whose arguments
// list its paths. Every path is checked before anything is written; a
// failure is a *ToolError naming the file. Contents are kept by the
// workspace (do not modify them after) and hashed only when first needed.
func (s *Session) ImportFiles(ctx context.Context, files map[string][]byte) error {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	if err := CheckImportPaths(names); err != nil {
		return err
	}
	for len(names) > 0 {
		i, size := 0, 0
		for i < len(names) && (i == 0 || size+len(files[names[i]]) <= MaxPageBytes) {
			size += len(files[names[i]])
			i++
		}
		if err := s.ImportBatch(ctx, names[:i], func(j int) []byte { return files[names[j]] }); err != nil {
			return err
		}
		names = names[i:]
	}
	return nil
}

// ImportBatch is one kernel call of ImportFiles: it writes paths[j] with
// data(j). Hosts that move a batch's bytes in one piece (the JS boundary)
// call it directly. A hook that rewrites the paths must keep their count.
func (s *Session) ImportBatch(ctx context.Context, paths []string, data func(j int) []byte) error {
	op := &contentOp{name: "importFiles", schema: importSchema, paths: importPaths,
		run: func(ctx context.Context, args json.RawMessage) (string, error) {
			ps := importPaths(args)
			if len(ps) != len(paths) {
				return "", kernel.InvalidArgument("importFiles: %d paths after the hooks, %d files given", len(ps), len(paths))
			}
			if err := CheckImportPaths(ps); err != nil {
				return "", kernel.InvalidArgument("%s", err.Error())
			}
			total := 0
			var pc workspace.Pacer
			for j, p := range ps {
				if err := pc.Check(ctx); err != nil {
					return "", err
				}
				d := data(j)
				if err := s.ws.PutFile(ctx, p, d); err != nil {
					return "", fmt.Errorf("importFiles: files[%q]: %w", p, err)
				}
				total += len(d)
			}
			return fmt.Sprintf("imported %d files (%d bytes)", len(ps), total), nil
		}}
	_, err := s.host(ctx, op, map[string]any{"paths": paths})
	return err
}

// CheckImportPaths checks every path of an import before anything is
// written: each must name a file, and no two the same one. The error is a
// *ToolError naming the key.
func CheckImportPaths(paths []string) error {
	seen := make(map[string]string, len(paths))
	for _, n := range paths {
		r, err := workspace.ResolveFile("importFiles", n)
		if err != nil {
			return importError(fmt.Sprintf("importFiles: files[%q]: %v", n, err))
		}
		if o, dup := seen[r]; dup {
			return importError(fmt.Sprintf("importFiles: files[%q] and files[%q] name the same file %s", o, n, r))
		}
		seen[r] = n
	}
	return nil
}

func importError(msg string) error {
	return &ToolError{Result: &kernel.Result{Name: "importFiles", Output: msg, ExitCode: 1,
		ErrorKind: &kernel.ErrorKind{Type: kernel.ErrInvalidArgument, Message: msg}}}
}

// ExportOptions select what ExportFiles returns.
type ExportOptions struct {
	// Under is the directory exported ("" or "." for the whole workspace).
	Under string `json:"under,omitempty"`
	// Include is a glob pattern (the glob tool's syntax) matched against
	// each path relative to Under; "" means every file.
	Include string `json:"include,omitempty"`
}

// ExportedFile is one file of an ExportPage: its path, size and whether
// it is text (valid UTF-8 without a NUL byte); its bytes are the next
// Size bytes of the page's Data.
type ExportedFile struct {
	Path string `json:"path"`
	Size int    `json:"size"`
	Text bool   `json:"text"`
}

// ExportPage is one page of an export: files in walk order, their bytes
// back to back in Data, and Next, the cursor of the next page ("" at the
// end).
type ExportPage struct {
	Files []ExportedFile `json:"files"`
	Data  []byte         `json:"-"`
	Next  string         `json:"next"`
}

const exportSchema = `{"type":"object","properties":{"under":{"type":"string"},"include":{"type":"string"},"cursor":{"type":"string"},"maxBytes":{"type":"integer","minimum":1}},"additionalProperties":false}`

// ExportFiles returns every file under o.Under matching o.Include, with
// its exact bytes (copies), paging through ExportPage.
func (s *Session) ExportFiles(ctx context.Context, o ExportOptions) (map[string][]byte, error) {
	out := map[string][]byte{}
	cursor := ""
	for {
		pg, err := s.ExportPage(ctx, o, cursor, MaxPageBytes)
		if err != nil {
			return nil, err
		}
		off := 0
		for _, f := range pg.Files {
			out[f.Path] = pg.Data[off : off+f.Size : off+f.Size]
			off += f.Size
		}
		if pg.Next == "" {
			return out, nil
		}
		cursor = pg.Next
	}
}

// ExportPage is one kernel call of an export (exportFiles): the files
// after cursor ("" for the first page) until about maxBytes of content
// (at least one file). Pages follow the walk order; a workspace changed
// between pages is exported as it is when each page is read.
func (s *Session) ExportPage(ctx context.Context, o ExportOptions, cursor string, maxBytes int) (*ExportPage, error) {
	return s.ExportPageTo(ctx, o, cursor, maxBytes, nil)
}

// ExportPageTo is ExportPage with the page's Data appended to buf[:0]
// (nil: a new buffer): a host that copies each page out before reading the
// next one reuses one buffer, instead of touching fresh memory per page.
func (s *Session) ExportPageTo(ctx context.Context, o ExportOptions, cursor string, maxBytes int, buf []byte) (*ExportPage, error) {
	pg := &ExportPage{Files: []ExportedFile{}, Data: buf[:0]}
	op := &contentOp{name: "exportFiles", schema: exportSchema, read: true,
		paths: func(args json.RawMessage) []string {
			var a ExportOptions
			_ = json.Unmarshal(args, &a)
			return []string{orDefault(a.Under, ".")}
		},
		run: func(ctx context.Context, args json.RawMessage) (string, error) {
			var a struct {
				ExportOptions
				Cursor   string `json:"cursor"`
				MaxBytes int    `json:"maxBytes"`
			}
			if err := json.Unmarshal(args, &a); err != nil {
				return "", err
			}
			return s.exportPage(ctx, a.ExportOptions, a.Cursor, a.MaxBytes, pg)
		}}
	args := map[string]any{"under": o.Under, "include": o.Include, "maxBytes": max(maxBytes, 1)}
	if cursor != "" {
		args["cursor"] = cursor
	}
	if _, err := s.host(ctx, op, args); err != nil {
		return nil, err
	}
	return pg, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (s *Session) exportPage(ctx context.Context, o ExportOptions, cursor string, maxBytes int, pg *ExportPage) (string, error) {
	under, err := workspace.Resolve(orDefault(o.Under, "."))
	if err != nil {
		return "", kernel.InvalidArgument("exportFiles: under: %v", err)
	}
	match := func(string) bool { return true }
	if o.Include != "" {
		if match, err = tools.MatchGlob(o.Include); err != nil {
			return "", kernel.InvalidArgument("exportFiles: include: %v", err)
		}
	}
	if cursor != "" {
		c, err := workspace.Resolve(cursor)
		if err != nil || c != cursor || (under != "." && c != under && !strings.HasPrefix(c, under+"/")) {
			return "", kernel.InvalidArgument("exportFiles: cursor %q is not a path under %q: pass the nextCursor of the previous page, unchanged", cursor, under)
		}
	}
	cur := strings.Split(cursor, "/")
	data := pg.Data
	err = s.ws.Walk(ctx, under, func(p string, e workspace.Entry) error {
		if cursor != "" && walkCompare(strings.Split(p, "/"), cur) <= 0 {
			if e.Kind == workspace.KindDir && !isPrefix(strings.Split(p, "/"), cur) {
				return fs.SkipDir
			}
			return nil
		}
		if e.Kind != workspace.KindFile {
			return nil
		}
		rel := p
		if under != "." {
			rel = strings.TrimPrefix(p, under+"/")
		}
		if !match(rel) {
			return nil
		}
		if len(pg.Files) > 0 && len(data)+int(e.Size) > maxBytes {
			pg.Next = pg.Files[len(pg.Files)-1].Path
			return fs.SkipAll
		}
		b, err := s.ws.ReadData(ctx, p)
		if err != nil {
			return err
		}
		if cap(data) == 0 {
			data = make([]byte, 0, min(maxBytes, 64<<20))
		}
		data = append(data, b...)
		pg.Files = append(pg.Files, ExportedFile{Path: p, Size: len(b), Text: utf8.Valid(b) && bytes.IndexByte(b, 0) < 0})
		return nil
	})
	if err != nil {
		return "", err
	}
	pg.Data = data
	return fmt.Sprintf("exported %d files (%d bytes)", len(pg.Files), len(data)), nil
}

// walkCompare orders two paths (split at '/') as Walk visits them: name
// by name, a directory before its contents.
func walkCompare(a, b []string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := strings.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return len(a) - len(b)
}

// isPrefix reports whether dir (split) is an ancestor of (or is) p.
func isPrefix(dir, p []string) bool {
	return len(dir) <= len(p) && slices.Equal(dir, p[:len(dir)])
}
