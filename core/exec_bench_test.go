//go:build unix

package core_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/workspace/dirfs"
)

// go test -run '^$' -bench 'Bash|Git' -benchtime 50x ./core/
//
// bash true through a session (unconfined and in bubblewrap), a 10 MiB
// capture, a git log page at offset 1,990 and git status over 200
// changed files. Each iteration also runs the floor, the same work
// spawned bare, so the two share the machine's load; the medians and
// their ratio are reported (floor-ms, ms, x-floor).

// paired times floor and call alternately, once each per iteration.
func paired(b *testing.B, floor, call func() error) { pairedRuns(b, 0, 1, floor, call) }

// pairedRuns times runs of k floors then k calls, each call gap after the
// previous one ended (the gap is not timed): k = 1 and a gap of 50 ms is
// an agent's pace, where a warm shell is ready; k = 5 and no gap are
// calls back to back, where the pool drains.
func pairedRuns(b *testing.B, gap time.Duration, k int, floor, call func() error) {
	var fs, cs []float64
	ms := func(f func() error) float64 {
		time.Sleep(gap)
		t := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		return float64(time.Since(t).Microseconds()) / 1000
	}
	for b.Loop() {
		for range k {
			fs = append(fs, ms(floor))
		}
		for range k {
			cs = append(cs, ms(call))
		}
	}
	med := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	f, c := med(fs), med(cs)
	b.ReportMetric(f, "floor-ms")
	b.ReportMetric(c, "ms")
	b.ReportMetric(c/f, "x-floor")
}

func spawn(dir string, argv ...string) func() error {
	return func() error {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = dir
		return cmd.Run()
	}
}

func BenchmarkBashTrue(b *testing.B) {
	dir := b.TempDir()
	for name, o := range sandboxModes() {
		b.Run(name, func(b *testing.B) {
			s := dirSession(b, dir, o)
			ctx := context.Background()
			call := func() error { _, err := s.Bash(ctx, "true"); return err }
			// The floor: bash alone, spawned bare.
			floor := spawn(dir, "/bin/bash", "-c", "true")
			b.Run("gap-50ms", func(b *testing.B) { pairedRuns(b, 50*time.Millisecond, 1, floor, call) })
			b.Run("back-to-back", func(b *testing.B) { pairedRuns(b, 0, 5, floor, call) })
		})
	}
}

func BenchmarkBashCapture10MiB(b *testing.B) {
	dir := b.TempDir()
	s := dirSession(b, dir, dirfs.ExecOptions{Sandbox: "none"})
	ctx := context.Background()
	const cmd = "head -c 5242880 /dev/zero; head -c 5242880 /dev/zero >&2"
	// The floor: the same command with its output thrown away.
	paired(b, spawn(dir, "/bin/bash", "-c", cmd), func() error { _, err := s.Bash(ctx, cmd); return err })
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
	b.Run("log-offset-1990", func(b *testing.B) {
		paired(b, spawn(dir, "git", "log", "--format=%H%x00%an%x00%aI%x00%s", "-n", "11", "--skip=1990", head, "--"), func() error {
			r, err := s.Git(ctx, core.GitOptions{Command: "log", Limit: 10, Cursor: head + ":1990"})
			if err == nil && r.ExitCode != 0 {
				err = fmt.Errorf("%s", r.Output)
			}
			return err
		})
	})
	b.Run("status-200-changed", func(b *testing.B) {
		paired(b, spawn(dir, "git", "status", "--porcelain=v1", "--branch", "--untracked-files=all"), func() error {
			r, err := s.Git(ctx, core.GitOptions{Command: "status"})
			if err == nil && r.Metadata["dirty_count"] != 200 {
				err = fmt.Errorf("%v", r.Metadata)
			}
			return err
		})
	})
}
