package tools

import (
	"encoding/json"

	"github.com/a3s-lab/code-wasm/kernel"
)

// What one call of each file tool touches (kernel.Toucher): the paths the
// permission rules and hook matchers judge, and the pattern a bare rule
// matches. Arguments may be invalid: a value of the wrong type is left out,
// as the kernel's fallback leaves it out.

// touchArgs are the arguments that name what a file tool's call touches.
type touchArgs struct {
	FilePath, Path, Pattern *string
	Files                   []*string // files[].path
}

// readTouchArgs reads them; only string values count.
func readTouchArgs(args json.RawMessage) (a touchArgs) {
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return a
	}
	str := func(v any) *string {
		if s, ok := v.(string); ok {
			return &s
		}
		return nil
	}
	a.FilePath, a.Path, a.Pattern = str(m["file_path"]), str(m["path"]), str(m["pattern"])
	fs, _ := m["files"].([]any)
	for _, f := range fs {
		if fm, ok := f.(map[string]any); ok {
			a.Files = append(a.Files, str(fm["path"]))
		}
	}
	return a
}

// touched collects the given paths (nil ones are absent) and the pattern.
func touched(pattern *string, paths ...*string) kernel.Touched {
	var t kernel.Touched
	for _, p := range paths {
		if p != nil {
			t.Paths = append(t.Paths, *p)
		}
	}
	if pattern != nil {
		t.Pattern = *pattern
	}
	return t
}

// Touches: the file read, and each of files[].path.
func (*Read) Touches(args json.RawMessage) kernel.Touched {
	a := readTouchArgs(args)
	return touched(nil, append([]*string{a.FilePath}, a.Files...)...)
}

// Touches: the file written.
func (*Write) Touches(args json.RawMessage) kernel.Touched {
	return touched(nil, readTouchArgs(args).FilePath)
}

// Touches: the file edited.
func (*Edit) Touches(args json.RawMessage) kernel.Touched {
	return touched(nil, readTouchArgs(args).FilePath)
}

// Touches: the file patched.
func (*Patch) Touches(args json.RawMessage) kernel.Touched {
	return touched(nil, readTouchArgs(args).FilePath)
}

// Touches: the directory or file searched, and the pattern.
func (*Grep) Touches(args json.RawMessage) kernel.Touched {
	a := readTouchArgs(args)
	return touched(a.Pattern, a.Path)
}

// Touches: the directory searched, and the pattern.
func (*Glob) Touches(args json.RawMessage) kernel.Touched {
	a := readTouchArgs(args)
	return touched(a.Pattern, a.Path)
}

// Touches: the directory listed.
func (*Ls) Touches(args json.RawMessage) kernel.Touched {
	return touched(nil, readTouchArgs(args).Path)
}
