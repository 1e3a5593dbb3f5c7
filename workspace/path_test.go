package workspace_test

import (
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/a3s-lab/code-wasm/workspace"
	"golang.org/x/text/unicode/norm"
)

func TestResolve(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
		err  error // nil: success
	}{
		{"empty is root", "", ".", nil},
		{"dot is root", ".", ".", nil},
		{"dot slash is root", "./", ".", nil},
		{"plain file", "a.txt", "a.txt", nil},
		{"nested", "src/main.go", "src/main.go", nil},
		{"trailing slash", "src/", "src", nil},
		{"repeated slashes", "src//pkg///x.go", "src/pkg/x.go", nil},
		{"dot components dropped", "./src/./x.go", "src/x.go", nil},
		{"backslash becomes slash", `src\pkg\x.go`, "src/pkg/x.go", nil},
		{"mixed separators", `src/pkg\x.go`, "src/pkg/x.go", nil},
		{"dotdot inside", "a/b/../c", "a/c", nil},
		{"dotdot back to root", "a/..", ".", nil},
		{"dotdot via backslash inside", `a\..\b`, "b", nil},
		{"three dots is a name", "...", "...", nil},
		{"dotdot prefix is a name", "..foo/x", "..foo/x", nil},
		{"spaces kept", " a b /c ", " a b /c ", nil},
		{"unicode name", "données/日本.txt", "données/日本.txt", nil},
		{"colon later is fine", "a/b:c", "a/b:c", nil},
		{"leading dotdot escapes", "..", "", workspace.ErrPathEscape},
		{"dotdot file escapes", "../secret", "", workspace.ErrPathEscape},
		{"deep escape", "a/../../b", "", workspace.ErrPathEscape},
		{"escape via backslash", `..\x`, "", workspace.ErrPathEscape},
		{"escape after dot", "./../x", "", workspace.ErrPathEscape},
		{"absolute", "/etc/passwd", "", workspace.ErrInvalidPath},
		{"absolute root", "/", "", workspace.ErrInvalidPath},
		{"absolute backslash", `\windows\system32`, "", workspace.ErrInvalidPath},
		{"drive letter", "C:/Windows", "", workspace.ErrInvalidPath},
		{"drive letter relative", "c:foo", "", workspace.ErrInvalidPath},
		{"drive letter backslash", `D:\x`, "", workspace.ErrInvalidPath},
		{"drive letter after normalisation", "./C:/x", "", workspace.ErrInvalidPath},
		{"drive letter after dotdot", "a/../C:", "", workspace.ErrInvalidPath},
		{"UNC", `\\server\share\x`, "", workspace.ErrInvalidPath},
		{"UNC slashes", "//server/share", "", workspace.ErrInvalidPath},
		{"NUL", "a\x00b", "", workspace.ErrInvalidPath},
		{"newline", "a\nb", "", workspace.ErrInvalidPath},
		{"tab", "a\tb", "", workspace.ErrInvalidPath},
		{"escape char", "a\x1b[31m", "", workspace.ErrInvalidPath},
		{"DEL", "a\x7f", "", workspace.ErrInvalidPath},
		{"C1 control", "a\u0085b", "", workspace.ErrInvalidPath},
		{"invalid UTF-8", "a\xffb", "", workspace.ErrInvalidPath},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := workspace.Resolve(tc.in)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("Resolve(%q) = %q, %v; want error %v", tc.in, got, err, tc.err)
				}
				if got != "" {
					t.Errorf("Resolve(%q) returned %q with an error", tc.in, got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Resolve(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestResolveEscapeMessage(t *testing.T) {
	_, err := workspace.Resolve("../x")
	if err == nil || err.Error() != "Workspace boundary violation: path escapes workspace" {
		t.Fatalf("escape error text = %v; want upstream's exact words", err)
	}
}

func TestResolveErrorNamesThePath(t *testing.T) {
	for _, in := range []string{"/etc/passwd", "C:/x", "a\x00b", `\\srv\x`} {
		_, err := workspace.Resolve(in)
		if err == nil {
			t.Fatalf("Resolve(%q) succeeded", in)
		}
		if !strings.Contains(err.Error(), workspace.Display(in)) {
			t.Errorf("Resolve(%q) error %q does not show the path", in, err)
		}
		for _, r := range err.Error() {
			if unicode.IsControl(r) {
				t.Errorf("Resolve(%q) error %q contains a raw control character", in, err)
			}
		}
	}
}

func TestValidatePattern(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
		err  error
	}{
		{"simple glob", "*.go", "*.go", nil},
		{"doublestar", "**/*.go", "**/*.go", nil},
		{"leading dot slash removed", "./src/**/*.ts", "src/**/*.ts", nil},
		{"repeated dot slash removed", "././x", "x", nil},
		{"backslash is a separator", `a\*b`, "a/*b", nil},
		{"windows-style glob", `src\**\*.ts`, "src/**/*.ts", nil},
		{"dot backslash removed", `.\src\*`, "src/*", nil},
		{"braces", "{a,b}/*.md", "{a,b}/*.md", nil},
		{"dotdot-like name", "..foo/*", "..foo/*", nil},
		{"empty", "", "", nil},
		{"absolute", "/etc/*", "", workspace.ErrInvalidPath},
		{"absolute backslash", `\x\*`, "", workspace.ErrInvalidPath},
		{"drive letter", "C:/*", "", workspace.ErrInvalidPath},
		{"dotdot first", "../*", "", workspace.ErrPathEscape},
		{"dotdot middle", "src/../../*", "", workspace.ErrPathEscape},
		{"dotdot last", "src/..", "", workspace.ErrPathEscape},
		{"dotdot backslash", `src\..\x`, "", workspace.ErrPathEscape},
		{"NUL", "*\x00", "", workspace.ErrInvalidPath},
		{"newline", "a\n*", "", workspace.ErrInvalidPath},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := workspace.ValidatePattern(tc.in)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("ValidatePattern(%q) = %q, %v; want error %v", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ValidatePattern(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestDisplay(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "a/b.txt", "a/b.txt"},
		{"newline", "a\nb", `a\x0ab`},
		{"NUL", "\x00", `\x00`},
		{"DEL", "\x7f", `\x7f`},
		{"C1", "\u0085", `\u0085`},
		{"invalid byte", "a\xff", `a\xff`},
		{"unicode kept", "日本", "日本"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := workspace.Display(tc.in); got != tc.want {
				t.Fatalf("Display(%q) = %q; want %q", tc.in, got, tc.want)
			}
		})
	}
}

// escapesLexically walks p the way a careless resolver would (both
// separators, "." skipped, ".." pops) and reports whether it ever rises
// above the root.
func escapesLexically(p string) bool {
	depth := 0
	for _, seg := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		switch seg {
		case ".":
		case "..":
			depth--
			if depth < 0 {
				return true
			}
		default:
			depth++
		}
	}
	return false
}

func FuzzResolve(f *testing.F) {
	for _, s := range []string{
		"", ".", "a", "a/b", "../x", "a/../..", `a\..\..\b`, "/abs", `\\unc\x`, "C:x",
		"./C:", "a/./b//c/", "...", "..a", "a\x00", "a\u0085", "\xff", "x/../C:/y",
		"cafe\u0301", "\u212a:x", "a/\u037e/..", "\u1100\u1161", "=\u0338",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := workspace.Resolve(in)
		if escapesLexically(in) && err == nil {
			t.Fatalf("Resolve(%q) = %q: a path whose walk leaves the root resolved", in, got)
		}
		if err != nil {
			if got != "" {
				t.Fatalf("Resolve(%q) returned %q with error %v", in, got, err)
			}
			if !errors.Is(err, workspace.ErrPathEscape) && !errors.Is(err, workspace.ErrInvalidPath) {
				t.Fatalf("Resolve(%q) error %v is neither ErrPathEscape nor ErrInvalidPath", in, err)
			}
			return
		}
		if got == "." {
			return
		}
		if got == "" || strings.HasPrefix(got, "/") || strings.HasSuffix(got, "/") || strings.Contains(got, `\`) || strings.Contains(got, "//") {
			t.Fatalf("Resolve(%q) = %q: not a clean relative path", in, got)
		}
		if !utf8.ValidString(got) {
			t.Fatalf("Resolve(%q) = %q: invalid UTF-8", in, got)
		}
		for _, r := range got {
			if unicode.IsControl(r) {
				t.Fatalf("Resolve(%q) = %q: control character", in, got)
			}
		}
		if len(got) > workspace.MaxPathBytes {
			t.Fatalf("Resolve(%q) = %d bytes: over MaxPathBytes", in, len(got))
		}
		for _, seg := range strings.Split(got, "/") {
			if len(seg) > workspace.MaxNameBytes {
				t.Fatalf("Resolve(%q): component of %d bytes, over MaxNameBytes", in, len(seg))
			}
			if seg == "." || seg == ".." || seg == "" {
				t.Fatalf("Resolve(%q) = %q: component %q", in, got, seg)
			}
		}
		if !norm.NFC.IsNormalString(got) {
			t.Fatalf("Resolve(%q) = %q: not in NFC", in, got)
		}
		again, err := workspace.Resolve(got)
		if err != nil || again != got {
			t.Fatalf("Resolve(Resolve(%q)) = %q, %v; want the fixed point %q", in, again, err, got)
		}
	})
}

// Resolve puts paths in Unicode NFC: the composed and decomposed spellings
// of a name are one path (so one file, and one form for every rule), and
// checks such as the drive-letter one apply to the normalised form.
func TestResolveNFC(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"cafe\u0301/menu.txt", "café/menu.txt"},
		{"café/menu.txt", "café/menu.txt"},
		{"a/../cafe\u0301", "café"},
		{"\u1100\u1161.txt", "\uac00.txt"}, // Hangul jamo compose
		{"\u212b", "\u00c5"},               // ANGSTROM SIGN is Å
		{"o\u0308\u0304", "\u022b"},        // ȫ: two marks compose in order
		{"x\u0301\u0327", "x\u0327\u0301"}, // no composite: marks reordered canonically
		{"e\u0301\u0301", "\u00e9\u0301"},  // one mark composes, the next stays
		{`dir\cafe` + "\u0301", "dir/café"},
	} {
		got, err := workspace.Resolve(c.in)
		if err != nil || got != c.want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	// KELVIN SIGN is K in NFC: "\u212a:x" is the drive-letter path "K:x".
	if _, err := workspace.Resolve("\u212a:/x"); !errors.Is(err, workspace.ErrInvalidPath) {
		t.Errorf("Resolve(KELVIN SIGN + \":/x\"): %v; want a refused drive letter", err)
	}
	if p, err := workspace.ValidatePattern("cafe\u0301/*.txt"); err != nil || p != "café/*.txt" {
		t.Errorf("ValidatePattern(NFD) = %q, %v", p, err)
	}
}
