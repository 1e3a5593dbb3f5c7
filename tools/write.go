package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/workspace"
)

// Write is the `write` tool: overwrite (creating parents) or append with a
// compare-and-swap offset (REFERENCE.md §2.2).
type Write struct{ ws *workspace.Workspace }

// maxWriteBytes bounds one call's content. A call's cost grows with its
// size at every layer it crosses (JSON decoding, schema validation,
// hashing, events): 100 MB took 13–31 s and over a gigabyte under Node.
// Larger files are written in parts with mode=append.
const maxWriteBytes = 16 << 20

func (*Write) Name() string { return "write" }
func (*Write) Description() string {
	return "Write a workspace file. mode=overwrite (default) replaces the whole file with content, creating it and any missing parent directories. " +
		"mode=append adds content to the end and requires expected_offset: the file's current size in UTF-8 bytes (0 for a new file). " +
		"If the size differs the call is rejected and nothing changes (re-read the file to get its size); retrying an append that already " +
		"succeeded is safe and reports already_applied=true. content may be at most 16 MiB per call: write a larger file in parts with mode=append. " +
		"For small changes to an existing file prefer edit or patch."
}
func (*Write) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"file_path":{"type":"string","minLength":1,"description":"Workspace-relative path of the file to write."},` +
		`"content":{"type":"string","description":"The full new content (overwrite) or the chunk to add (append)."},` +
		`"mode":{"type":"string","enum":["overwrite","append"],"default":"overwrite","description":"overwrite (default) or append."},` +
		`"expected_offset":{"type":"integer","minimum":0,"description":"append: the file's current size in bytes; required. overwrite: omit or 0."}},` +
		`"required":["file_path","content"],"additionalProperties":false,` +
		`"examples":[{"file_path":"notes/todo.md","content":"# TODO\n"},{"file_path":"log.txt","content":"line 2\n","mode":"append","expected_offset":7}]}`)
}

func (*Write) Capabilities(args json.RawMessage) kernel.Capabilities {
	c := kernel.Conservative()
	c.Idempotent, c.OutputKind = true, kernel.OutputDiff
	var a struct {
		Mode string `json:"mode"`
	}
	if json.Unmarshal(args, &a) == nil && a.Mode == "append" {
		c.Resumable = true
	}
	return c
}

func (w *Write) Execute(ctx context.Context, call *kernel.Call) (*kernel.Result, error) {
	var a struct {
		FilePath       *string `json:"file_path"`
		Content        *string `json:"content"`
		Mode           *string `json:"mode"`
		ExpectedOffset *int64  `json:"expected_offset"`
	}
	if err := decodeArgs("write", call.Args, &a); err != nil {
		return nil, err
	}
	if a.FilePath == nil || *a.FilePath == "" {
		return nil, kernel.InvalidArgument("write: file_path is required")
	}
	if a.Content == nil {
		return nil, kernel.InvalidArgument("write: content is required (use \"\" for an empty file)")
	}
	if len(*a.Content) > maxWriteBytes {
		return nil, kernel.InvalidArgument("write: content is %d bytes; the limit is %d bytes (16 MiB) per call: write a larger file in parts with mode=append (expected_offset: the size written so far)", len(*a.Content), maxWriteBytes)
	}
	mode := "overwrite"
	if a.Mode != nil {
		mode = *a.Mode
	}
	if a.ExpectedOffset != nil && *a.ExpectedOffset < 0 {
		return nil, kernel.InvalidArgument("write: expected_offset must be 0 or more, got %d", *a.ExpectedOffset)
	}
	name, err := workspace.ResolveFile("write", *a.FilePath)
	if err != nil {
		return nil, err
	}
	switch mode {
	case "overwrite":
		if a.ExpectedOffset != nil && *a.ExpectedOffset != 0 {
			return nil, kernel.InvalidArgument("write: expected_offset=%d applies only to mode=append; omit it (or pass 0) to overwrite", *a.ExpectedOffset)
		}
		return w.overwrite(ctx, name, []byte(*a.Content), call.IsContentHidden(name))
	case "append":
		if a.ExpectedOffset == nil {
			return nil, kernel.InvalidArgument("write: mode=append requires expected_offset, the file's current size in bytes (0 for a new file)")
		}
		return w.append(ctx, name, []byte(*a.Content), *a.ExpectedOffset, call.IsContentHidden(name))
	}
	return nil, kernel.InvalidArgument("write: unknown mode %q: use \"overwrite\" or \"append\"", mode)
}

// overwrite and append take hide: the read rules keep the file's content
// from this call, so neither what was replaced nor whether the file
// already ends with the chunk is told.
func (w *Write) overwrite(ctx context.Context, name string, content []byte, hide bool) (*kernel.Result, error) {
	before, _, err := w.ws.ReadFile(ctx, name)
	created := false
	switch {
	case errors.Is(err, fs.ErrNotExist):
		created = true
	case errors.Is(err, workspace.ErrIsDir):
		return nil, kernel.InvalidArgument("write: %s is a directory", workspace.Display(name))
	case err != nil:
		return nil, asOp("write", err)
	}
	if _, err := w.ws.WriteFile(ctx, name, content); err != nil {
		return nil, asOp("write", err)
	}
	meta := map[string]any{"file_path": name, "created": created, "mode": "overwrite", "bytes": len(content)}
	hasBefore := !created
	if hide && hasBefore {
		before, hasBefore = nil, false
		meta["before_withheld"] = true
	}
	changeMeta(meta, name, before, content, hasBefore)
	verb := "Updated"
	if created {
		verb = "Created"
	}
	return kernel.OK(fmt.Sprintf("%s %s (%d bytes)", verb, workspace.Display(name), len(content)), meta), nil
}

func (w *Write) append(ctx context.Context, name string, chunk []byte, expected int64, hide bool) (*kernel.Result, error) {
	cur, ver, err := w.ws.ReadFile(ctx, name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		cur, ver = nil, ""
	case errors.Is(err, workspace.ErrIsDir):
		return nil, kernel.InvalidArgument("write: %s is a directory", workspace.Display(name))
	case err != nil:
		return nil, asOp("write", err)
	}
	size := int64(len(cur))
	meta := map[string]any{"file_path": name, "mode": "append", "offset": expected, "appended_bytes": len(chunk)}
	if size != expected {
		if !hide && size == expected+int64(len(chunk)) && bytes.HasSuffix(cur, chunk) {
			meta["resulting_size"], meta["already_applied"] = size, true
			return kernel.OK(fmt.Sprintf("Append already applied: %s already ends with these %d bytes at offset %d (size %d); nothing changed", workspace.Display(name), len(chunk), expected, size), meta), nil
		}
		return nil, kernel.InvalidArgument("write: append rejected: expected_offset=%d but %s is %d bytes; nothing was written (re-read the file and retry with expected_offset=%d)", expected, workspace.Display(name), size, size)
	}
	if ver == "" && size == 0 {
		// A new file: create it unless one appeared meanwhile.
		if _, err := w.ws.AppendFile(ctx, name, chunk, ""); err != nil {
			return nil, asOp("write", err)
		}
	} else if _, err := w.ws.AppendFile(ctx, name, chunk, ver); err != nil {
		return nil, asOp("write", err)
	}
	meta["resulting_size"], meta["already_applied"] = size+int64(len(chunk)), false
	return kernel.OK(fmt.Sprintf("Appended %d bytes to %s at offset %d (size now %d)", len(chunk), workspace.Display(name), expected, size+int64(len(chunk))), meta), nil
}
