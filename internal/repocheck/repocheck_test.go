package repocheck

import (
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found")
		}
		dir = parent
	}
}

func goFiles(t *testing.T, root string) []string {
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", ".git", "testdata", ".cache",
				"third_party": // upstream code kept as upstream wrote it (its own module)
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// quotedSyscallJS is the import path as it appears in source, spelled in two
// pieces so text searches for the quoted path do not mistake this test for
// an importer.
const quotedSyscallJS = `"syscall` + `/js"`

// A file importing syscall/js must build only for js: a _js.go name or a
// //go:build line that requires js. Otherwise native builds and tests break.
func TestSyscallJSHasJSConstraint(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	checked := 0
	for _, p := range goFiles(t, root) {
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		imports := false
		for _, imp := range f.Imports {
			if imp.Path.Value == quotedSyscallJS {
				imports = true
			}
		}
		if !imports {
			continue
		}
		checked++
		base := strings.TrimSuffix(filepath.Base(p), "_test.go")
		base = strings.TrimSuffix(base, ".go")
		if strings.HasSuffix(base, "_js") || strings.HasSuffix(base, "_js_wasm") {
			continue
		}
		if !requiresJS(f.Comments, f.Package) {
			rel, _ := filepath.Rel(root, p)
			t.Errorf("%s imports syscall/js without a js build constraint (add //go:build js && wasm, or name it *_js.go)", rel)
		}
	}
	if checked == 0 {
		t.Fatal("no file imports syscall/js: the check found nothing to check")
	}
}

func requiresJS(groups []*ast.CommentGroup, pkg token.Pos) bool {
	for _, g := range groups {
		if g.Pos() > pkg {
			break
		}
		for _, c := range g.List {
			if !constraint.IsGoBuild(c.Text) {
				continue
			}
			expr, err := constraint.Parse(c.Text)
			if err != nil {
				return false
			}
			// The constraint must be false whenever js is false.
			return !expr.Eval(func(tag string) bool { return tag != "js" })
		}
	}
	return false
}

// Every package has a doc.go saying what it is and what it is not.
func TestEveryPackageHasDocGo(t *testing.T) {
	root := moduleRoot(t)
	dirs := map[string]bool{}
	for _, p := range goFiles(t, root) {
		dirs[filepath.Dir(p)] = true
	}
	for d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "doc.go")); err != nil {
			rel, _ := filepath.Rel(root, d)
			t.Errorf("package %s has no doc.go", rel)
		}
	}
}

// The package comment is doc.go's alone: a second one in another file
// (go doc joins them) drifts from it. A generator (//go:build ignore) is
// a program of its own and keeps its comment.
func TestPackageCommentOnlyInDocGo(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	for _, p := range goFiles(t, root) {
		if filepath.Base(p) == "doc.go" || strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Doc != nil && !ignored(f) {
			rel, _ := filepath.Rel(root, p)
			t.Errorf("%s has a package comment; it belongs in doc.go", rel)
		}
	}
}

// ignored reports whether f is built only under the tag "ignore".
func ignored(f *ast.File) bool {
	for _, g := range f.Comments {
		for _, c := range g.List {
			if expr, err := constraint.Parse(c.Text); err == nil {
				return !expr.Eval(func(tag string) bool { return tag != "ignore" })
			}
		}
	}
	return false
}

// maxAnswer is how long one RATIONALE answer may be without a table: the
// decision, the figure behind it and the command (STYLE.md).
const maxAnswer = 1536

// Every answer of a RATIONALE.md (the root's and the subsystems') is
// under maxAnswer bytes unless it holds a table; a `##` topic's own text
// (before its first `###`) counts as one answer.
func TestRationaleAnswersShort(t *testing.T) {
	root := moduleRoot(t)
	files, _ := filepath.Glob(filepath.Join(root, "RATIONALE.md"))
	more, _ := filepath.Glob(filepath.Join(root, "*", "*", "RATIONALE.md"))
	some, _ := filepath.Glob(filepath.Join(root, "*", "RATIONALE.md"))
	files = append(append(files, some...), more...)
	if len(files) == 0 {
		t.Fatal("no RATIONALE.md found")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		heading, body := "", []string{}
		check := func() {
			text := strings.TrimSpace(strings.Join(body, "\n"))
			table := false
			for _, l := range body {
				table = table || strings.HasPrefix(l, "|")
			}
			if heading != "" && len(text) > maxAnswer && !table {
				t.Errorf("%s: %q is %d bytes and holds no table; the limit is %d", rel, heading, len(text), maxAnswer)
			}
		}
		fence := false
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "```") {
				fence = !fence
			}
			if !fence && (strings.HasPrefix(l, "## ") || strings.HasPrefix(l, "### ")) {
				check()
				heading, body = l, body[:0]
				continue
			}
			body = append(body, l)
		}
		check()
	}
}
