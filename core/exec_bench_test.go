//go:build unix

package core_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/workspace/dirfs"
)

// go test -run '^$' -bench 'Bash|Git' ./core/
//
// bash true through a session (unconfined and in bubblewrap), a 10 MiB
// capture, a git log page at offset 1,990 and git status over 200
// changed files.

func BenchmarkBashTrue(b *testing.B) {
	// The floor in the same run: what spawning bash alone costs here.
	b.Run("floor-bash-c-true", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("/bin/bash", "-c", "true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for name, o := range sandboxModes() {
		b.Run(name, func(b *testing.B) {
			s := dirSession(b, b.TempDir(), o)
			ctx := context.Background()
			for b.Loop() {
				if _, err := s.Bash(ctx, "true"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkBashCapture10MiB(b *testing.B) {
	s := dirSession(b, b.TempDir(), dirfs.ExecOptions{Sandbox: "none"})
	ctx := context.Background()
	for b.Loop() {
		if _, err := s.Bash(ctx, "head -c 5242880 /dev/zero; head -c 5242880 /dev/zero >&2"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGit(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("no git")
	}
	dir := gitRepo(b, 2000)
	for i := range 200 {
		p := filepath.Join(dir, "src", fmt.Sprintf("f%03d.txt", i))
		os.WriteFile(p, []byte("changed\n"), 0o644)
	}
	s := dirSession(b, dir, dirfs.ExecOptions{Sandbox: "none"})
	ctx := context.Background()
	first, err := s.Git(ctx, core.GitOptions{Command: "log", Limit: 10})
	if err != nil || first.ExitCode != 0 {
		b.Fatal(err, first)
	}
	head := strings.SplitN(first.Metadata["page"].(map[string]any)["next_cursor"].(string), ":", 2)[0]
	// The floors in the same run: the same git work spawned bare.
	raw := func(args ...string) func(b *testing.B) {
		return func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command("git", args...)
				cmd.Dir = dir
				if err := cmd.Run(); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.Run("floor-raw-log-skip-1990", raw("log", "--format=%H%x00%an%x00%aI%x00%s", "-n", "11", "--skip=1990", head, "--"))
	b.Run("floor-raw-status-porcelain", raw("status", "--porcelain=v1", "--branch", "--untracked-files=all"))
	b.Run("log-offset-1990", func(b *testing.B) {
		for b.Loop() {
			r, err := s.Git(ctx, core.GitOptions{Command: "log", Limit: 10, Cursor: head + ":1990"})
			if err != nil || r.ExitCode != 0 {
				b.Fatal(err, r.Output)
			}
		}
	})
	b.Run("status-200-changed", func(b *testing.B) {
		for b.Loop() {
			r, err := s.Git(ctx, core.GitOptions{Command: "status"})
			if err != nil || r.Metadata["dirty_count"] != 200 {
				b.Fatal(err, r.Metadata)
			}
		}
	})
}
