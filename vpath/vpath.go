package vpath

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/a3s-lab/code-wasm/errkind"
)

// ErrPathEscape is returned when a path would leave the workspace root.
// Its text is upstream's, so models and hosts see the same words.
var ErrPathEscape = errkind.New(errkind.InvalidArgument, "Workspace boundary violation: path escapes workspace")

// ErrInvalidPath is returned for paths the virtual resolver refuses outright:
// absolute paths, drive letters, UNC paths, NUL and control characters.
var ErrInvalidPath = errkind.New(errkind.InvalidArgument, "invalid workspace path")

// Resolve normalises a user-supplied path into the driver grammar: a clean,
// slash-separated, root-relative path, with "." for the root. It is purely
// lexical (REFERENCE.md §3.5): it never consults a driver.
//
//   - "" and "." mean the root;
//   - "\" becomes "/";
//   - "." components are dropped, ".." pops one component;
//   - a ".." that would leave the root fails with ErrPathEscape;
//   - absolute paths, drive letters ("C:"), UNC paths ("\\host"), NUL and
//     other control characters (C0, DEL, C1) and invalid UTF-8 fail with
//     ErrInvalidPath. A drive letter is refused wherever it lands, so
//     "x/../C:" fails too and every success is a fixed point:
//     Resolve(r) == r;
//   - the path is put in Unicode Normalization Form C first, so the
//     composed and decomposed spellings of a name ("café" as U+00E9, or as
//     "e" and U+0301) are one file, and permission rules and hooks, which
//     see resolved paths, see one form.
func Resolve(p string) (string, error) {
	if err := checkChars(p); err != nil {
		return "", err
	}
	p = NFC(p)
	if canonical(p) {
		// already a fixed point: no allocation (grep resolves every file it reads)
		if err := checkLength(p, p); err != nil {
			return "", err
		}
		return p, nil
	}
	s := strings.ReplaceAll(p, `\`, "/")
	if strings.HasPrefix(s, "//") {
		return "", fmt.Errorf("%w: UNC paths are not allowed: %s", ErrInvalidPath, Display(p))
	}
	if strings.HasPrefix(s, "/") {
		return "", fmt.Errorf("%w: absolute paths are not allowed: %s (use a path relative to the workspace root)", ErrInvalidPath, Display(p))
	}
	if hasDriveLetter(s) {
		return "", fmt.Errorf("%w: drive letters are not allowed: %s", ErrInvalidPath, Display(p))
	}
	parts := make([]string, 0, strings.Count(s, "/")+1)
	for _, seg := range strings.Split(s, "/") {
		switch seg {
		case "", ".":
			continue
		case "..":
			if len(parts) == 0 {
				return "", ErrPathEscape
			}
			parts = parts[:len(parts)-1]
		default:
			parts = append(parts, seg)
		}
	}
	if len(parts) == 0 {
		return ".", nil
	}
	if hasDriveLetter(parts[0]) {
		return "", fmt.Errorf("%w: drive letters are not allowed: %s", ErrInvalidPath, Display(p))
	}
	r := strings.Join(parts, "/")
	if err := checkLength(p, r); err != nil {
		return "", err
	}
	return r, nil
}

// Path length limits: Resolve refuses a resolved path longer than
// MaxPathBytes or with a component longer than MaxNameBytes (the Linux
// PATH_MAX and NAME_MAX; see RATIONALE.md).
const (
	MaxPathBytes = 4096
	MaxNameBytes = 255
)

// checkLength applies MaxPathBytes and MaxNameBytes to the resolved path r
// of the user's path p.
func checkLength(p, r string) error {
	if len(r) > MaxPathBytes {
		return fmt.Errorf("%w: path is %d bytes long; the limit is %d bytes: %s…", ErrInvalidPath, len(r), MaxPathBytes, Display(cutRunes(p, 64)))
	}
	seg := 0
	for i := 0; i <= len(r); i++ {
		if i == len(r) || r[i] == '/' {
			if i-seg > MaxNameBytes {
				return fmt.Errorf("%w: path component %s… is %d bytes long; the limit is %d bytes per file or directory name", ErrInvalidPath, Display(cutRunes(r[seg:i], 32)), i-seg, MaxNameBytes)
			}
			seg = i + 1
		}
	}
	return nil
}

// cutRunes returns at most n bytes of s without splitting a UTF-8 sequence.
func cutRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// ValidatePattern checks a glob or grep path pattern: it must be relative,
// contain no ".." component, and no control characters. The pattern is
// returned in Unicode NFC (as Resolve returns paths, so "café*" matches
// whichever spelling created the file), with every "\" turned into "/"
// and a leading "./" removed.
//
// "\" is a path separator here as in Resolve, not a glob escape: a model
// writing Windows paths means src\*.ts as src/*.ts, and an escape would
// silently match nothing. A literal metacharacter is matched with a class:
// [*], [?], [[], [{]. (See RATIONALE.md.)
func ValidatePattern(pattern string) (string, error) {
	if err := checkChars(pattern); err != nil {
		return "", err
	}
	pattern = strings.ReplaceAll(NFC(pattern), `\`, "/")
	if strings.HasPrefix(pattern, "/") || strings.HasPrefix(pattern, `\`) || hasDriveLetter(pattern) {
		return "", fmt.Errorf("%w: pattern must be relative to the workspace: %s", ErrInvalidPath, Display(pattern))
	}
	for _, seg := range strings.FieldsFunc(pattern, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == ".." {
			return "", fmt.Errorf("%w: pattern may not contain '..': %s", ErrPathEscape, Display(pattern))
		}
	}
	for strings.HasPrefix(pattern, "./") {
		pattern = pattern[2:]
	}
	return pattern, nil
}

// Display escapes control characters (and bytes that are not UTF-8) so a
// path can be shown safely.
func Display(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); {
		r, n := utf8.DecodeRuneInString(p[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, p[i])
		case r < 0x80 && unicode.IsControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(p[i : i+n])
		}
		i += n
	}
	return b.String()
}

// NFC returns s in Unicode Normalization Form C, the form Resolve gives
// every path in: a path pattern (a permission rule's, a hook's) must be in
// it too to match both spellings of a name. ASCII, most paths, is already
// in it: one byte loop, no table lookups, no allocation.
func NFC(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return norm.NFC.String(s)
		}
	}
	return s
}

// checkChars refuses NUL, control characters and invalid UTF-8. Invalid
// UTF-8 is refused because browser and JS drivers hold names as UTF-16
// strings: two different byte strings would alias one file there.
func checkChars(p string) error {
	if !utf8.ValidString(p) {
		return fmt.Errorf("%w: path is not valid UTF-8: %s", ErrInvalidPath, Display(p))
	}
	for _, r := range p {
		if r == 0 {
			return fmt.Errorf("%w: path contains a NUL character: %s", ErrInvalidPath, Display(p))
		}
		if unicode.IsControl(r) {
			return fmt.Errorf("%w: path contains a control character: %s", ErrInvalidPath, Display(p))
		}
	}
	return nil
}

// canonical reports whether p is already in the driver grammar and not
// the root: non-empty segments separated by single '/', none "." or "..",
// no '\', no drive letter. Resolve returns such a path unchanged.
func canonical(p string) bool {
	if p == "" || p[0] == '/' || p[len(p)-1] == '/' || hasDriveLetter(p) {
		return false
	}
	seg := 0 // start of the current segment
	for i := 0; i <= len(p); i++ {
		if i < len(p) && p[i] == '\\' {
			return false
		}
		if i == len(p) || p[i] == '/' {
			switch p[seg:i] {
			case "", ".", "..":
				return false
			}
			seg = i + 1
		}
	}
	return true
}

func hasDriveLetter(s string) bool {
	if len(s) < 2 || s[1] != ':' {
		return false
	}
	c := s[0]
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}
