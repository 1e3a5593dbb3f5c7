package hostapi

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestNoSwitchOverMethods keeps dispatch in the table: no switch in the
// package's sources has a case naming a method, or switches over a
// variable called method or name.
func TestNoSwitchOverMethods(t *testing.T) {
	fset := token.NewFileSet()
	ents, err := os.ReadDir(".")
	noErr(t, err)
	files := 0
	for _, ent := range ents {
		n := ent.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, 0)
		noErr(t, err)
		files++
		ast.Inspect(f, func(node ast.Node) bool {
			sw, ok := node.(*ast.SwitchStmt)
			if !ok {
				return true
			}
			if id, ok := sw.Tag.(*ast.Ident); ok && (id.Name == "method" || id.Name == "name") {
				t.Errorf("%s: a switch over %s: add a row to the method table instead", fset.Position(sw.Pos()), id.Name)
			}
			for _, st := range sw.Body.List {
				for _, x := range st.(*ast.CaseClause).List {
					lit, ok := x.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					if s, _ := strconv.Unquote(lit.Value); methods[s].run != nil {
						t.Errorf("%s: a switch case names the method %q: add a row to the method table instead", fset.Position(lit.Pos()), s)
					}
				}
			}
			return true
		})
	}
	if files < 5 || len(methods) < 20 {
		t.Fatalf("read %d files and %d methods; the test sees nothing", files, len(methods))
	}
}

// TestMethodTable: every row decodes strictly and names a missing
// required key; a sync row is not callable with call, nor the reverse.
func TestMethodTable(t *testing.T) {
	for name, m := range methods {
		if m.name != name {
			t.Errorf("row %q is filed under %q", m.name, name)
		}
	}
	ts := NewSessions()
	id, err := ts.Create(t.Context(), nil, nil, Env{})
	noErr(t, err)
	_, err = ts.Call(t.Context(), id, "toolNames", nil)
	contains(t, errText(err), `unknown method "toolNames"`)
	_, err = ts.CallSync(id, "readFile", []byte(`{"path":"a"}`))
	contains(t, errText(err), `unknown synchronous method "readFile"`)
	_, err = ts.Call(t.Context(), id, "readFile", []byte(`{"path":"a","bogus":1}`))
	contains(t, errText(err), `readFile: unknown key bogus`)
	_, err = ts.Call(t.Context(), id, "writeFile", []byte(`{"content":"x"}`))
	contains(t, errText(err), `writeFile: path is required (a string)`)
	_, err = ts.Call(t.Context(), id, "editFile", []byte(`{"path":"a","oldString":1,"newString":"x"}`))
	contains(t, errText(err), `oldString`)
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
