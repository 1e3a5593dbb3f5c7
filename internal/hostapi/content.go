package hostapi

import (
	"context"
	"fmt"
	"sync"

	"github.com/a3s-lab/code-wasm/core"
)

// contentMethods are the exact-content methods (API.md "Workspace
// content"). Their bytes cross beside the JSON (CallBytes): a file's
// content is never a JSON string, and a bulk transfer is a series of
// chunks of about core.MaxPageBytes, one kernel call each.
var contentMethods = []row{
	method("readText", 0, func(c *call, a *pathOnly) (any, error) { return c.readShared(a) }),
	method("readBytes", 0, func(c *call, a *pathOnly) (any, error) { return c.readShared(a) }),
	method("writeBytes", 0, writeBytes),
	method("importFiles", 0, importFiles),
	method("exportFiles", 0, exportFiles),
}

// Bytes is the answer of a content method: JSON metadata (nil for none)
// and the bytes that cross beside it.
type Bytes struct {
	Meta any
	Data []byte
	page *[]byte // Data's buffer, from pages (exportFiles)
}

// Release hands Data's buffer back for the next page once the host has
// copied it out (exportFiles reuses one warm buffer instead of touching
// fresh memory for every page); b.Data must not be used after. A host
// that keeps Data never calls it.
func (b *Bytes) Release() {
	if b.page != nil && cap(b.Data) <= core.MaxPageBytes {
		*b.page = b.Data[:0]
		pages.Put(b.page)
		b.page, b.Data = nil, nil
	}
}

// pages are exportFiles' page buffers (*[]byte) between calls.
var pages sync.Pool

// CallBytes is Call with bytes beside the JSON arguments (in; nil for
// none). A content method answers *Bytes; any other method its usual
// JSON-encodable value.
func (t *Sessions) CallBytes(ctx context.Context, id int, method string, raw, in []byte) (any, error) {
	return t.dispatchWith(ctx, id, method, raw, false, in)
}

type pathOnly struct {
	Path *string `json:"path" required:"true"`
}

func (c *call) readShared(a *pathOnly) (any, error) {
	data, err := c.e.s.ReadShared(c.ctx, c.method, *a.Path)
	if _, err := c.e.typed(c.ctx, c.method, nil, err); err != nil {
		return nil, err
	}
	return &Bytes{Data: data}, nil
}

// needBytes refuses a content method called without its bytes (through
// call rather than callBytes).
func (c *call) needBytes() error {
	if c.in == nil {
		return errf(CodeInvalidCall, "%s: no bytes were given (the method takes them beside its arguments: api.callBytes)", c.method)
	}
	return nil
}

func writeBytes(c *call, a *pathOnly) (any, error) {
	if err := c.needBytes(); err != nil {
		return nil, err
	}
	res, err := c.e.s.WriteBytes(c.ctx, *a.Path, c.in)
	return c.e.result(c.ctx, c.method, res, err)
}

// FileChunk is files moved as bytes: the content of Paths[i] is the next
// Sizes[i] bytes of the data beside them.
type FileChunk struct {
	Paths []string `json:"paths"`
	Sizes []int    `json:"sizes"`
}

// split checks the chunk against its data and returns its files.
func (f *FileChunk) split(what string, data []byte) (map[string][]byte, error) {
	if len(f.Paths) != len(f.Sizes) {
		return nil, fmt.Errorf("%s: %d paths but %d sizes", what, len(f.Paths), len(f.Sizes))
	}
	out := make(map[string][]byte, len(f.Paths))
	off := 0
	for i, p := range f.Paths {
		n := f.Sizes[i]
		if n < 0 || off+n > len(data) {
			return nil, fmt.Errorf("%s: sizes[%d] = %d runs past the %d bytes given", what, i, n, len(data))
		}
		out[p] = data[off : off+n : off+n]
		off += n
	}
	if off != len(data) {
		return nil, fmt.Errorf("%s: the sizes add up to %d bytes, %d were given", what, off, len(data))
	}
	return out, nil
}

func importFiles(c *call, a *struct {
	FileChunk
	// Check: only check every path of the whole import (no bytes, nothing
	// written), before its first chunk.
	Check bool `json:"check"`
}) (any, error) {
	if a.Check {
		return nil, typedErr(c, core.CheckImportPaths(a.Paths))
	}
	if err := c.needBytes(); err != nil {
		return nil, err
	}
	if _, err := a.split(c.method, c.in); err != nil {
		return nil, errf(CodeInvalidCall, "%v", err)
	}
	offs := make([]int, len(a.Sizes)+1)
	for i, n := range a.Sizes {
		offs[i+1] = offs[i] + n
	}
	err := c.e.s.ImportBatch(c.ctx, a.Paths, func(j int) []byte { return c.in[offs[j]:offs[j+1]:offs[j+1]] })
	return nil, typedErr(c, err)
}

func typedErr(c *call, err error) error {
	_, err = c.e.typed(c.ctx, c.method, nil, err)
	return err
}

func exportFiles(c *call, a *struct {
	Under    string `json:"under"`
	Include  string `json:"include"`
	Cursor   string `json:"cursor"`
	MaxBytes int    `json:"maxBytes"`
}) (any, error) {
	if a.MaxBytes <= 0 {
		a.MaxBytes = core.MaxPageBytes
	}
	page, _ := pages.Get().(*[]byte)
	if page == nil {
		page = new([]byte)
	}
	pg, err := c.e.s.ExportPageTo(c.ctx, core.ExportOptions{Under: a.Under, Include: a.Include}, a.Cursor, a.MaxBytes, *page)
	if err := typedErr(c, err); err != nil {
		pages.Put(page)
		return nil, err
	}
	meta := struct {
		Paths []string `json:"paths"`
		Sizes []int    `json:"sizes"`
		Text  []bool   `json:"text"`
		Next  string   `json:"next"`
	}{Paths: make([]string, len(pg.Files)), Sizes: make([]int, len(pg.Files)), Text: make([]bool, len(pg.Files)), Next: pg.Next}
	for i, f := range pg.Files {
		meta.Paths[i], meta.Sizes[i], meta.Text[i] = f.Path, f.Size, f.Text
	}
	return &Bytes{Meta: meta, Data: pg.Data, page: page}, nil
}

// SeedChunk is a FileChunk with its data: initial files of createSession
// (Env.Files).
type SeedChunk struct {
	FileChunk
	Data []byte
}

// seedFiles merges the JSON files and the byte chunks of createSession,
// refusing a key given in both.
func seedFiles(json map[string]string, chunks []SeedChunk) (map[string][]byte, error) {
	out := make(map[string][]byte, len(json))
	for k, v := range json {
		out[k] = []byte(v)
	}
	for _, c := range chunks {
		m, err := c.split("createSession: options.workspace.files", c.Data)
		if err != nil {
			return nil, err
		}
		for k, v := range m {
			if _, dup := out[k]; dup {
				return nil, fmt.Errorf("createSession: options.workspace.files[%q] is given twice", k)
			}
			out[k] = v
		}
	}
	return out, nil
}
