package workspace_test

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/workspace"
)

// TestWalkTreePaths: a listing may come with its entries' paths (memfs
// caches them) or without (WalkTree joins dir and name); the walk is the
// same either way, and a listing whose paths do not pair up with its
// entries is an error, not a walk with wrong paths.
func TestWalkTreePaths(t *testing.T) {
	tree := map[string][]workspace.Entry{
		".":   {{Name: "a", Kind: workspace.KindDir}, {Name: "b.txt", Kind: workspace.KindFile}},
		"a":   {{Name: "c", Kind: workspace.KindDir}, {Name: "d.txt", Kind: workspace.KindFile}},
		"a/c": {{Name: "e.txt", Kind: workspace.KindFile}},
	}
	join := func(dir, name string) string {
		if dir == "." {
			return name
		}
		return dir + "/" + name
	}
	withPaths := func(dir string) ([]workspace.Entry, []string, error) {
		var ps []string
		for _, e := range tree[dir] {
			ps = append(ps, join(dir, e.Name))
		}
		return tree[dir], ps, nil
	}
	without := func(dir string) ([]workspace.Entry, []string, error) { return tree[dir], nil, nil }
	short := func(dir string) ([]workspace.Entry, []string, error) {
		es, ps, _ := withPaths(dir)
		return es, ps[:len(ps)-1], nil
	}
	cases := []struct {
		name  string
		root  string
		list  func(string) ([]workspace.Entry, []string, error)
		skip  string // path whose callback returns fs.SkipDir
		want  []string
		error string
	}{
		{name: "paths given", root: ".", list: withPaths, want: []string{"a", "a/c", "a/c/e.txt", "a/d.txt", "b.txt"}},
		{name: "paths joined", root: ".", list: without, want: []string{"a", "a/c", "a/c/e.txt", "a/d.txt", "b.txt"}},
		{name: "paths given below the root", root: "a", list: withPaths, want: []string{"a/c", "a/c/e.txt", "a/d.txt"}},
		{name: "paths joined below the root", root: "a", list: without, want: []string{"a/c", "a/c/e.txt", "a/d.txt"}},
		{name: "SkipDir with paths given", root: ".", list: withPaths, skip: "a/c", want: []string{"a", "a/c", "a/d.txt", "b.txt"}},
		{name: "SkipDir on a file with paths given", root: ".", list: withPaths, skip: "a/c/e.txt", want: []string{"a", "a/c", "a/c/e.txt", "a/d.txt", "b.txt"}},
		{name: "paths do not pair up", root: ".", list: short, error: "2 entries, 1 paths"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			err := workspace.WalkTree(context.Background(), c.root, c.list, func(p string, e workspace.Entry) error {
				got = append(got, p)
				if !strings.HasSuffix(p, e.Name) {
					t.Errorf("path %q for entry %q", p, e.Name)
				}
				if p == c.skip {
					return fs.SkipDir
				}
				return nil
			})
			if c.error != "" {
				if err == nil || !strings.Contains(err.Error(), c.error) {
					t.Fatalf("WalkTree error %v; want one saying %q", err, c.error)
				}
				if len(got) != 0 {
					t.Errorf("visited %q before failing; want nothing", got)
				}
				return
			}
			if err != nil || !slices.Equal(got, c.want) {
				t.Errorf("visited %q, %v; want %q", got, err, c.want)
			}
		})
	}
	// A driver's Listing may say where its directories are; a wrong index
	// is an error, not a walk that misses or invents a directory.
	listing := func(dirs map[string][]int) func(string, struct{}) (*workspace.Listing[struct{}], error) {
		return func(d string, _ struct{}) (*workspace.Listing[struct{}], error) {
			es, ps, _ := withPaths(d)
			return &workspace.Listing[struct{}]{Entries: es, Paths: ps, Dirs: dirs[d]}, nil
		}
	}
	dirCases := []struct {
		name  string
		dirs  map[string][]int
		want  []string
		error string
	}{
		{"Dirs given", map[string][]int{".": {0}, "a": {0}, "a/c": {}}, []string{"a", "a/c", "a/c/e.txt", "a/d.txt", "b.txt"}, ""},
		{"Dirs computed", nil, []string{"a", "a/c", "a/c/e.txt", "a/d.txt", "b.txt"}, ""},
		{"Dirs naming a file", map[string][]int{".": {1}}, nil, "index 1 is not a directory"},
		{"Dirs out of range", map[string][]int{".": {0}, "a": {0, 2}}, []string{"a", "a/c", "a/c/e.txt"}, "index 2 is not a directory"},
		{"Dirs out of order", map[string][]int{".": {0}, "a": {0, 0}}, []string{"a", "a/c", "a/c/e.txt"}, "index 0 is not a directory"},
	}
	for _, c := range dirCases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			err := workspace.WalkTreeOf(context.Background(), ".", struct{}{}, listing(c.dirs), func(p string, e workspace.Entry) error {
				got = append(got, p)
				return nil
			})
			if c.error == "" && err != nil || c.error != "" && (err == nil || !strings.Contains(err.Error(), c.error)) {
				t.Fatalf("WalkTreeOf error %v; want %q", err, c.error)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("visited %q; want %q", got, c.want)
			}
		})
	}
	t.Run("cancelled context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := workspace.WalkTree(ctx, ".", withPaths, func(string, workspace.Entry) error { return nil })
		if !errors.Is(err, context.Canceled) {
			t.Errorf("WalkTree error %v; want context.Canceled", err)
		}
	})
}
