package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/workspace"
)

// Edit is the `edit` tool: exact-string replacement with a dry run and
// count guards, written compare-and-swap (REFERENCE.md §2.3).
type Edit struct{ ws *workspace.Workspace }

func (*Edit) Name() string { return "edit" }
func (*Edit) Description() string {
	return "Replace an exact string in a workspace file. old_string must match the file exactly (whitespace and indentation included). " +
		"Without replace_all it must occur exactly once: if it occurs more often the call is rejected, so add surrounding lines to make it unique " +
		"or set replace_all=true to replace every occurrence. dry_run=true returns the same before/after metadata and replacement_count without writing; " +
		"then pass expected_replacements=<that count> (rejected before writing if the count differs) and optionally max_replacements as an upper bound. " +
		"If the file changed since it was read the write fails with version_conflict: re-read and retry."
}
func (*Edit) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"file_path":{"type":"string","minLength":1,"description":"Workspace-relative path of the file to edit."},` +
		`"old_string":{"type":"string","minLength":1,"description":"Exact text to find; must not be empty."},` +
		`"new_string":{"type":"string","description":"Replacement text."},` +
		`"replace_all":{"type":"boolean","default":false,"description":"Replace every occurrence instead of requiring exactly one."},` +
		`"dry_run":{"type":"boolean","default":false,"description":"Compute the change and its metadata without writing."},` +
		`"expected_replacements":{"type":"integer","minimum":1,"description":"Reject (before writing) unless exactly this many replacements would be made."},` +
		`"max_replacements":{"type":"integer","minimum":1,"description":"Reject (before writing) if more than this many replacements would be made."}},` +
		`"required":["file_path","old_string","new_string"],"additionalProperties":false,` +
		`"examples":[{"file_path":"src/main.go","old_string":"x := 1","new_string":"x := 2"},{"file_path":"src/a.go","old_string":"foo(","new_string":"bar(","replace_all":true,"dry_run":true}]}`)
}

func (*Edit) Capabilities(args json.RawMessage) kernel.Capabilities {
	var a struct {
		DryRun bool `json:"dry_run"`
	}
	if json.Unmarshal(args, &a) == nil && a.DryRun {
		c := kernel.ParallelSafeRead(16)
		c.OutputKind = kernel.OutputDiff
		return c
	}
	c := kernel.Conservative()
	c.OutputKind = kernel.OutputDiff
	return c
}

// Effects: edit compares the file's content with old_string, and its
// answer (before/after, the count, even whether old_string was found)
// tells what the file holds, so the read rules govern it as a read; it
// mutates unless it is a dry run.
func (*Edit) Effects(args json.RawMessage) kernel.Effects {
	var a struct {
		DryRun bool `json:"dry_run"`
	}
	dry := json.Unmarshal(args, &a) == nil && a.DryRun
	return kernel.Effects{Mutates: !dry, ReadsContent: true}
}

// EditArgs are the arguments of edit.
type EditArgs struct {
	FilePath             *string `json:"file_path"`
	OldString            *string `json:"old_string"`
	NewString            *string `json:"new_string"`
	ReplaceAll           bool    `json:"replace_all"`
	DryRun               bool    `json:"dry_run"`
	ExpectedReplacements *int    `json:"expected_replacements"`
	MaxReplacements      *int    `json:"max_replacements"`
}

// EditContent computes the result of an edit on content: the new content
// and the replacement count, or an invalid_argument error. It is the pure
// core of the tool (fuzzed).
func EditContent(content string, a EditArgs) (string, int, error) {
	if a.OldString == nil || *a.OldString == "" {
		return "", 0, kernel.InvalidArgument("edit: old_string is required and must not be empty")
	}
	if a.NewString == nil {
		return "", 0, kernel.InvalidArgument("edit: new_string is required (use \"\" to delete old_string)")
	}
	if a.ExpectedReplacements != nil && *a.ExpectedReplacements < 1 {
		return "", 0, kernel.InvalidArgument("edit: expected_replacements must be at least 1, got %d", *a.ExpectedReplacements)
	}
	if a.MaxReplacements != nil && *a.MaxReplacements < 1 {
		return "", 0, kernel.InvalidArgument("edit: max_replacements must be at least 1, got %d", *a.MaxReplacements)
	}
	old, repl := *a.OldString, *a.NewString
	if old == repl {
		return "", 0, kernel.InvalidArgument("edit: new_string is identical to old_string; nothing would change")
	}
	n := strings.Count(content, old)
	if n == 0 && strings.Contains(content, "\r\n") && strings.Contains(old, "\n") && !strings.Contains(old, "\r\n") {
		// A CRLF file edited with LF text: match and write in the file's
		// own line ending.
		crOld := strings.ReplaceAll(old, "\n", "\r\n")
		if m := strings.Count(content, crOld); m > 0 {
			old, repl, n = crOld, strings.ReplaceAll(strings.ReplaceAll(repl, "\r\n", "\n"), "\n", "\r\n"), m
		}
	}
	switch {
	case n == 0:
		return "", 0, kernel.InvalidArgument("edit: old_string was not found in the file; re-read the file and copy the text exactly (including whitespace and indentation)")
	case n > 1 && !a.ReplaceAll:
		return "", 0, kernel.InvalidArgument("edit: old_string occurs %d times; add surrounding lines to make it unique, or set replace_all=true to replace all %d occurrences", n, n)
	}
	count := 1
	if a.ReplaceAll {
		count = n
	}
	if a.ExpectedReplacements != nil && *a.ExpectedReplacements != count {
		return "", 0, kernel.InvalidArgument("edit: expected_replacements=%d but the edit would make %d replacement(s); nothing was written", *a.ExpectedReplacements, count)
	}
	if a.MaxReplacements != nil && count > *a.MaxReplacements {
		return "", 0, kernel.InvalidArgument("edit: the edit would make %d replacement(s), more than max_replacements=%d; nothing was written", count, *a.MaxReplacements)
	}
	return strings.Replace(content, old, repl, count), count, nil
}

func (e *Edit) Execute(ctx context.Context, call *kernel.Call) (*kernel.Result, error) {
	var a EditArgs
	if err := decodeArgs("edit", call.Args, &a); err != nil {
		return nil, err
	}
	if a.FilePath == nil || *a.FilePath == "" {
		return nil, kernel.InvalidArgument("edit: file_path is required")
	}
	name, err := workspace.ResolveFile("edit", *a.FilePath)
	if err != nil {
		return nil, err
	}
	before, ver, err := e.ws.ReadFile(ctx, name)
	if err != nil {
		return nil, asOp("edit", err)
	}
	after, count, err := EditContent(string(before), a)
	if err != nil {
		return nil, err
	}
	if !a.DryRun {
		if _, err := e.ws.WriteFileIfVersion(ctx, name, []byte(after), ver); err != nil {
			var ce *workspace.ConflictError
			if errors.As(err, &ce) {
				return nil, &kernel.Error{
					Kind: kernel.ErrorKind{Type: kernel.ErrVersionConflict, Path: name, Expected: string(ce.Expected), Actual: string(ce.Actual)},
					Msg:  fmt.Sprintf("edit: %s changed since it was read (version conflict); nothing was written: re-read the file and retry", workspace.Display(name)),
					Err:  err,
				}
			}
			return nil, asOp("edit", err)
		}
	}
	meta := map[string]any{
		"file_path": name, "dry_run": a.DryRun, "replacement_count": count,
		"expected_replacements": intOrNil(a.ExpectedReplacements), "max_replacements": intOrNil(a.MaxReplacements),
	}
	changeMeta(meta, name, before, []byte(after), true)
	if a.DryRun {
		return kernel.OK(fmt.Sprintf("Dry run: %d replacement(s) would be made in %s; nothing was written. Apply with expected_replacements=%d.", count, workspace.Display(name), count), meta), nil
	}
	return kernel.OK(fmt.Sprintf("Edited %s: %d replacement(s).", workspace.Display(name), count), meta), nil
}

func intOrNil(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}
