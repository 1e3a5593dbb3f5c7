package dirfs_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/workspace"
)

// The escape fixture (research directory-bash-git.md §3): a root beside a
// directory "outside" holding a secret, and links of every shape.
const (
	secret = "OUTSIDE SECRET"
	probe  = "a3s-dirfs-escape-probe" // a name no escaping write may create
)

func fixture(t *testing.T) (root, outside string) {
	t.Helper()
	base := t.TempDir()
	root, outside = filepath.Join(base, "root"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "sub"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(root, "a.txt"):         "inside A\n",
		filepath.Join(root, "sub", "s.txt"):  "inside S\n",
		filepath.Join(outside, "secret.txt"): secret + "\n",
	}
	for p, s := range files {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"link_out":     "/etc",
		"file_out":     "/etc/hostname",
		"dotdot":       "..",
		"link_secret":  "../outside",
		"file_secret":  "../outside/secret.txt",
		"dangling_out": filepath.Join(outside, "newdir"),
		"link_in":      "sub",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	return root, outside
}

// snapshot is every path under dir with its content, for "nothing changed
// outside the root".
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		b, _ := os.ReadFile(p)
		m[p] = string(b)
		return nil
	})
	return m
}

func call(t *testing.T, s *core.Session, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := s.Tool(context.Background(), tool, args)
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	return res.Output, res.ExitCode == 0
}

func TestSymlinkEscapesAreRefused(t *testing.T) {
	root, outside := fixture(t)
	ws, _ := workspace.New(openDir(t, root))
	s, err := core.New(core.Options{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before := snapshot(t, outside)
	hostname, _ := os.ReadFile("/etc/hostname")

	refused := []struct {
		tool string
		args map[string]any
	}{
		{"read", map[string]any{"file_path": "link_out/hostname"}},
		{"read", map[string]any{"file_path": "file_out"}},
		{"read", map[string]any{"file_path": "dotdot/outside/secret.txt"}},
		{"read", map[string]any{"file_path": "link_secret/secret.txt"}},
		{"read", map[string]any{"file_path": "file_secret"}},
		{"read", map[string]any{"file_path": "dangling_out"}},
		{"write", map[string]any{"file_path": "link_out/" + probe, "content": "x"}},
		{"write", map[string]any{"file_path": "file_out", "content": "x"}},
		{"write", map[string]any{"file_path": "file_secret", "content": "x"}},
		{"write", map[string]any{"file_path": "dangling_out", "content": "x"}},
		{"write", map[string]any{"file_path": "dangling_out/" + probe, "content": "x"}},
		{"write", map[string]any{"file_path": "dotdot/outside/" + probe, "content": "x"}},
		{"write", map[string]any{"file_path": "link_secret/" + probe, "content": "x"}},
		{"write", map[string]any{"file_path": "link_secret/deep/er/" + probe, "content": "x"}},
		{"write", map[string]any{"file_path": "file_secret", "content": "x", "mode": "append", "expected_offset": len(secret) + 1}},
		{"edit", map[string]any{"file_path": "file_secret", "old_string": "OUTSIDE", "new_string": "CHANGED"}},
		{"edit", map[string]any{"file_path": "link_secret/secret.txt", "old_string": "OUTSIDE", "new_string": "CHANGED"}},
		{"edit", map[string]any{"file_path": "file_out", "old_string": string(hostname), "new_string": "CHANGED"}},
		{"ls", map[string]any{"path": "link_out"}},
		{"ls", map[string]any{"path": "dotdot"}},
		{"ls", map[string]any{"path": "link_secret"}},
		{"grep", map[string]any{"pattern": "SECRET", "path": "link_secret"}},
		{"grep", map[string]any{"pattern": "SECRET", "path": "file_secret"}},
		{"grep", map[string]any{"pattern": ".", "path": "link_out"}},
		{"grep", map[string]any{"pattern": ".", "path": "file_out"}},
		{"glob", map[string]any{"pattern": "*", "path": "link_secret"}},
		{"glob", map[string]any{"pattern": "*", "path": "link_out"}},
	}
	for _, c := range refused {
		out, ok := call(t, s, c.tool, c.args)
		if ok {
			t.Errorf("%s %v succeeded: %.200s", c.tool, c.args, out)
		} else if !strings.Contains(out, "boundary violation") {
			t.Errorf("%s %v: %q is not the path-escape error", c.tool, c.args, out)
		}
		if strings.Contains(out, secret) || (len(hostname) > 2 && strings.Contains(out, strings.TrimSpace(string(hostname))+"\n")) {
			t.Errorf("%s %v leaked: %q", c.tool, c.args, out)
		}
	}
	// Searches over the whole root see no content behind a link out.
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"grep", map[string]any{"pattern": "SECRET"}},
		{"grep", map[string]any{"pattern": "SECRET", "output_mode": "content"}},
		{"glob", map[string]any{"pattern": "**/secret.txt"}},
		{"glob", map[string]any{"pattern": "**/hostname"}},
		{"ls", map[string]any{"path": "."}},
	} {
		out, _ := call(t, s, c.tool, c.args)
		if strings.Contains(out, secret) || c.tool == "glob" && !strings.HasPrefix(out, "No files found") ||
			c.tool == "ls" && (strings.Contains(out, "secret.txt") || strings.Contains(out, "hostname")) {
			t.Errorf("%s %v shows what is outside: %q", c.tool, c.args, out)
		}
	}
	// link_out/../x is cleaned to x before any link is looked at: it names
	// the root's x, as for every other workspace kind.
	if out, ok := call(t, s, "read", map[string]any{"file_path": "link_out/../a.txt"}); !ok || !strings.Contains(out, "inside A") {
		t.Errorf("read link_out/../a.txt = %q, %v; want the root's a.txt", out, ok)
	}
	if _, ok := call(t, s, "write", map[string]any{"file_path": "link_out/../" + probe, "content": "in"}); !ok {
		t.Error("write link_out/../probe failed")
	}
	if b, err := os.ReadFile(filepath.Join(root, probe)); err != nil || string(b) != "in" {
		t.Errorf("link_out/../probe wrote %q, %v; want the root's file", b, err)
	}

	// A link inside the root works for every tool.
	inside := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"read", map[string]any{"file_path": "link_in/s.txt"}, "inside S"},
		{"ls", map[string]any{"path": "link_in"}, "s.txt"},
		{"grep", map[string]any{"pattern": "inside S", "path": "link_in"}, "s.txt"},
		{"glob", map[string]any{"pattern": "*.txt", "path": "link_in"}, "s.txt"},
		{"write", map[string]any{"file_path": "link_in/new.txt", "content": "new\n"}, ""},
		{"edit", map[string]any{"file_path": "link_in/s.txt", "old_string": "inside S", "new_string": "edited S"}, ""},
	}
	for _, c := range inside {
		out, ok := call(t, s, c.tool, c.args)
		if !ok || !strings.Contains(out, c.want) {
			t.Errorf("%s %v = %q, %v; want success showing %q", c.tool, c.args, out, ok, c.want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(root, "sub", "new.txt")); string(b) != "new\n" {
		t.Errorf("write link_in/new.txt left sub/new.txt = %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "sub", "s.txt")); string(b) != "edited S\n" {
		t.Errorf("edit link_in/s.txt left sub/s.txt = %q", b)
	}

	after := snapshot(t, outside)
	if !mapsEqual(before, after) {
		t.Errorf("outside the root changed:\nbefore %q\nafter  %q", before, after)
	}
	for _, p := range []string{"/etc/" + probe, filepath.Join(outside, "newdir")} {
		if _, err := os.Lstat(p); err == nil {
			os.RemoveAll(p)
			t.Errorf("%s was created outside the root", p)
		}
	}
	if b, _ := os.ReadFile("/etc/hostname"); string(b) != string(hostname) {
		t.Errorf("/etc/hostname changed to %q", b)
	}
}

func mapsEqual(a, b map[string]string) bool {
	ka, kb := keys(a), keys(b)
	if !slices.Equal(ka, kb) {
		return false
	}
	for k := range a {
		if a[k] != b[k] {
			return false
		}
	}
	return true
}

func keys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// TestSymlinkSwapRace reads sw/secret.txt 20,000 times while another
// goroutine swaps the link sw between a directory inside the root and
// one outside (research §3: check-then-open leaked 683 of 20,000).
func TestSymlinkSwapRace(t *testing.T) {
	root, outside := fixture(t)
	if err := os.WriteFile(filepath.Join(root, "sub", "secret.txt"), []byte("inside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, _ := workspace.New(openDir(t, root))
	stop := startSwapper(t, filepath.Join(root, "sw"), "sub", "../outside", outside)
	var inside, leaked int
	for range 20000 {
		b, _, err := ws.ReadFile(context.Background(), "sw/secret.txt")
		switch {
		case err != nil:
		case strings.Contains(string(b), secret):
			leaked += len(b)
		default:
			inside++
		}
	}
	swaps := stop()
	t.Logf("20000 reads: %d inside, %d bytes leaked, %d swaps", inside, leaked, swaps)
	if leaked != 0 {
		t.Fatalf("%d bytes read from outside the root", leaked)
	}
	if inside == 0 || swaps < 100 {
		t.Fatalf("the race did not run: %d reads inside, %d swaps", inside, swaps)
	}
}
