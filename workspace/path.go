package workspace

import (
	"fmt"
	"strings"

	"github.com/a3s-lab/code-wasm/errkind"
	"github.com/a3s-lab/code-wasm/vpath"
)

// ErrPathEscape is returned when a path would leave the workspace root
// (vpath.ErrPathEscape).
var ErrPathEscape = vpath.ErrPathEscape

// ErrInvalidPath is returned for paths the virtual resolver refuses outright
// (vpath.ErrInvalidPath).
var ErrInvalidPath = vpath.ErrInvalidPath

// Path length limits (vpath.MaxPathBytes, vpath.MaxNameBytes).
const (
	MaxPathBytes = vpath.MaxPathBytes
	MaxNameBytes = vpath.MaxNameBytes
)

// Resolve normalises a user-supplied path into the driver grammar: a clean,
// slash-separated, root-relative path, with "." for the root. See
// vpath.Resolve for the rules.
func Resolve(p string) (string, error) { return vpath.Resolve(p) }

// ValidatePattern checks a glob or grep path pattern; see
// vpath.ValidatePattern.
func ValidatePattern(pattern string) (string, error) { return vpath.ValidatePattern(pattern) }

// Display escapes control characters (and bytes that are not UTF-8) so a
// path can be shown safely.
func Display(p string) string { return vpath.Display(p) }

// NFC returns s in Unicode Normalization Form C, the form Resolve gives
// every path in (vpath.NFC).
func NFC(s string) string { return vpath.NFC(s) }

// dirSuffix returns how p, as the user wrote it, shows it can only name a
// directory: a trailing '/' or '\', or a last component "." or "..". It
// returns "" for a path that may name a file.
func dirSuffix(p string) string {
	switch {
	case p == "":
		return ""
	case strings.HasSuffix(p, "/") || strings.HasSuffix(p, `\`):
		return p[len(p)-1:]
	}
	i := strings.LastIndexAny(p, `/\`)
	switch last := p[i+1:]; last {
	case ".", "..":
		if i < 0 {
			return last
		}
		return p[i:]
	}
	return ""
}

// rule is a refusal by a path rule: its text as given, and errors.Is true
// for each of its sentinel kinds.
type rule struct {
	msg   string
	kinds []error
}

func (e *rule) Error() string { return e.msg }

// Kind: every path rule's failure is an invalid argument.
func (e *rule) Kind() errkind.Kind { return errkind.InvalidArgument }

func (e *rule) Is(target error) bool {
	for _, k := range e.kinds {
		if target == k {
			return true
		}
	}
	return false
}

// ResolveFile is Resolve for a path that must name a file the caller is
// about to create or change (write, append, edit, patch): besides Resolve's
// rules, a path written as a directory ("newdir/", "a.txt/", "x/.") and the
// root are refused. op names the caller's operation in the error, a
// *PathError whose error is ErrInvalidPath (an invalid_argument), and for
// the root also ErrIsDir.
func ResolveFile(op, p string) (string, error) {
	r, err := Resolve(p)
	if err != nil {
		return "", &PathError{Op: op, Path: p, Err: err}
	}
	if r == "." {
		return "", &PathError{Op: op, Path: p, Err: &rule{msg: "is a directory (the workspace root), not a file", kinds: []error{ErrInvalidPath, ErrIsDir}}}
	}
	if suf := dirSuffix(p); suf != "" {
		return "", &PathError{Op: op, Path: p, Err: &rule{
			msg:   fmt.Sprintf("the path ends with '%s' so it names a directory, not a file (give the file's path without it)", suf),
			kinds: []error{ErrInvalidPath, ErrIsDir}}}
	}
	return r, nil
}
