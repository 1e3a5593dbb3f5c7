package tree

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/workspace"
)

// TestDropSeesEveryContentLeave: the drivers' accounting (opfs's live
// bytes and cache) rests on drop: after every one of 2,000 random
// changes, the contents dropped and the contents still in the tree are
// exactly the contents ever put, each once; a refused change drops
// nothing and leaves the tree as it was.
func TestDropSeesEveryContentLeave(t *testing.T) {
	dropped, drops := map[int]int{}, 0
	tr := New(time.Unix(0, 0), func(f int) { dropped[f]++; drops++ })
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"a", "b", "a-b", "a.go"}
	randPath := func() string {
		p := names[rng.IntN(len(names))]
		for d := rng.IntN(3); d > 0; d-- {
			p = names[rng.IntN(len(names))] + "/" + p
		}
		return p
	}
	put := 0
	for step := range 2000 {
		before := shape(tr)
		dropsBefore := drops
		p, q := randPath(), randPath()
		mod := time.Unix(int64(step), 0)
		var err error
		switch rng.IntN(4) {
		case 0:
			if err = tr.Put(p, put+1, int64(step), mod); err == nil {
				put++
			}
		case 1:
			err = tr.MkdirAll(p, mod)
		case 2:
			err = tr.Remove(p, mod)
		case 3:
			err = tr.Rename(p, q, mod)
		}
		if err != nil && !slices.ContainsFunc([]error{fs.ErrNotExist, fs.ErrExist, fs.ErrInvalid, workspace.ErrIsDir, workspace.ErrNotDir}, func(k error) bool { return errors.Is(err, k) }) {
			t.Fatalf("step %d: unexpected error %v", step, err)
		}
		if err != nil && (drops != dropsBefore || !maps.Equal(shape(tr), before)) {
			t.Fatalf("step %d: a refused change (%v) changed the tree or dropped a content", step, err)
		}
		live := map[int]bool{}
		for _, n := range tr.All() {
			if !n.IsDir() {
				live[n.File()] = true
			}
		}
		for f := 1; f <= put; f++ {
			if n := dropped[f]; live[f] && n != 0 || !live[f] && n != 1 {
				t.Fatalf("step %d: content %d is live %v and was dropped %d times", step, f, live[f], n)
			}
		}
	}
}

// shape is every path of the tree with its kind, for comparing states.
func shape(tr *Tree[int]) map[string]string {
	m := map[string]string{}
	for p, n := range tr.All() {
		m[p] = fmt.Sprint(n.IsDir(), n.File())
	}
	return m
}
