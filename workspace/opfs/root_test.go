package opfs

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// A root is one restricted name, so no root can lie inside another's
// storage or be taken for one of the driver's files.
func TestValidateRoot(t *testing.T) {
	for _, ok := range []string{"victim", "my-project", "My_Project.2", "0", strings.Repeat("a", MaxRootBytes), "a.a3s.bak", "log-99"} {
		if err := ValidateRoot(ok); err != nil {
			t.Errorf("ValidateRoot(%q): %v", ok, err)
		}
	}
	for _, c := range []struct{ root, why string }{
		{"", "workspace.root is required"},
		{"victim/log-99.a3s", `'/' would put it inside another root's storage`},
		{"victim/sub", `'/' would put it inside another root's storage`},
		{"/victim", `'/' would put it inside another root's storage`},
		{"victim/", `'/' would put it inside another root's storage`},
		{`victim\log-1.a3s`, `'\\' would put it inside another root's storage`},
		{"log-1.a3s", "the driver's own files"},
		{"x.A3S", "the driver's own files"},
		{".", "must start with a letter or digit"},
		{"..", "must start with a letter or digit"},
		{".hidden", "must start with a letter or digit"},
		{"-x", "must start with a letter or digit"},
		{"a b", "' ' is not allowed"},
		{"é", "must start with a letter or digit"},
		{"aé", "is not allowed"},
		{"a\x00b", "is not allowed"},
		{"a:b", "':' is not allowed"},
		{strings.Repeat("a", MaxRootBytes+1), "65 bytes is too long"},
	} {
		err := ValidateRoot(c.root)
		if err == nil || !strings.Contains(err.Error(), c.why) {
			t.Errorf("ValidateRoot(%q): %v; want an error saying %q", c.root, err, c.why)
		}
	}
}

// A directory named like a log generation in a root's storage (a root
// nested inside it by an older version, with its own log inside) makes
// the root refuse to open with an error naming the entry, and nothing is
// changed; once it is gone the root opens with its files. A subdirectory
// with any other name is left alone.
func TestBlockedRoot(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name, entry string
		compact     bool // move the root's own log past generation 1 first
	}{
		{"nested root named like a newer generation", "log-99.a3s", false},
		{"named like an older generation", "log-1.a3s", true},
		{"named like the current generation's successor", "log-2.a3s", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := NewMemDir()
			f := open(t, d, Options{CompactBytes: 1 << 10})
			if _, err := f.WriteFile(ctx, "keep.txt", []byte("kept"), ""); err != nil {
				t.Fatal(err)
			}
			if c.compact {
				for range 40 {
					if _, err := f.WriteFile(ctx, "churn", make([]byte, 200), ""); err != nil {
						t.Fatal(err)
					}
				}
				if g := f.Stats().Generation; g < 2 {
					t.Fatalf("generation %d: no compaction", g)
				}
			}
			f.Close()
			d.Mkdir(c.entry)
			before, _ := d.List(ctx)
			_, err := OpenDir(ctx, d, Options{})
			var be *BlockedError
			if !errors.As(err, &be) || be.Entry != c.entry {
				t.Fatalf("OpenDir: %v; want a BlockedError for %q", err, c.entry)
			}
			be.Root = "victim"
			for _, want := range []string{`root "victim" cannot be opened`, `directory "` + c.entry + `"`, `"victim/` + c.entry + `"`, "nothing was changed", `removeEntry("` + c.entry + `", { recursive: true })`} {
				if !strings.Contains(be.Error(), want) {
					t.Errorf("the error does not say %q: %s", want, be.Error())
				}
			}
			if after, _ := d.List(ctx); !slices.Equal(after, before) {
				t.Fatalf("a refused open changed the directory: %v, was %v", after, before)
			}
			delete(d.dirs, c.entry) // what the error tells the user to do
			g := open(t, d, Options{})
			defer g.Close()
			if got := read(t, g, "keep.txt"); got != "kept" {
				t.Fatalf("keep.txt = %q after the blocking entry went", got)
			}
		})
	}
	t.Run("only a blocking directory", func(t *testing.T) {
		d := NewMemDir()
		d.Mkdir("log-1.a3s")
		var be *BlockedError
		if _, err := OpenDir(ctx, d, Options{}); !errors.As(err, &be) {
			t.Fatalf("OpenDir: %v", err)
		}
		if names, _ := d.List(ctx); len(names) != 1 {
			t.Fatalf("a refused open created %v", names)
		}
	})
	t.Run("any other subdirectory is left alone", func(t *testing.T) {
		d := NewMemDir()
		d.Mkdir("sub")
		d.Mkdir("log-x.a3s") // not a generation number
		f := open(t, d, Options{CompactBytes: 1 << 10})
		for range 40 {
			if _, err := f.WriteFile(ctx, "churn", make([]byte, 200), ""); err != nil {
				t.Fatal(err)
			}
		}
		f.Close()
		g := open(t, d, Options{})
		g.Close()
		if !d.dirs["sub"] || !d.dirs["log-x.a3s"] {
			t.Fatal("a subdirectory went away")
		}
	})
}
