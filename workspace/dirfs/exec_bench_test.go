//go:build unix

package dirfs

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/workspace"
)

// go test -run '^$' -bench Exec ./workspace/dirfs/
//
// The runner's cost of `true` beside its floors in the same run: the raw
// spawn of /bin/true and of `bash -c true`, and bwrap around bash.
func BenchmarkExecTrue(b *testing.B) {
	b.Run("floor-exec-true", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("floor-bash-c-true", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("/bin/bash", "-c", "true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for name, r := range runners(b) {
		if r.bwrap != "" {
			b.Run("floor-bwrap-bash-c-true", func(b *testing.B) {
				a := r.argv(workspace.ExecRequest{Argv: []string{"/bin/bash", "-c", "true"}}, r.root)
				for b.Loop() {
					if err := exec.Command(a[0], a[1:]...).Run(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run("runner-"+name, func(b *testing.B) {
			for b.Loop() {
				res, err := r.run(context.Background(), workspace.ExecRequest{Command: "true", Timeout: time.Minute})
				if err != nil || res.ExitCode != 0 {
					b.Fatal(err, res)
				}
			}
		})
	}
}
