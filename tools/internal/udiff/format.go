package udiff

import (
	"bytes"
	"fmt"
	"strings"
)

// maxDiffEdits bounds the Myers search. Beyond it the differing middle is
// reported as one replacement: still a correct diff, not a minimal one.
const maxDiffEdits = 1000

// splitKeep splits data into lines that keep their "\n" terminator; a final
// line without one is kept as is.
func splitKeep(data []byte) [][]byte {
	var out [][]byte
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			out = append(out, data)
			break
		}
		out = append(out, data[:i+1])
		data = data[i+1:]
	}
	return out
}

type editOp struct {
	kind byte // ' ', '-', '+'
	a, b int  // line index in a (for ' ' and '-') and in b (for ' ' and '+')
}

// diffLines returns an edit script turning a into b.
func diffLines(a, b [][]byte) []editOp {
	ids := map[string]int{}
	id := func(l []byte) int {
		if v, ok := ids[string(l)]; ok {
			return v
		}
		ids[string(l)] = len(ids)
		return len(ids) - 1
	}
	x := make([]int, len(a))
	for i, l := range a {
		x[i] = id(l)
	}
	y := make([]int, len(b))
	for i, l := range b {
		y[i] = id(l)
	}
	pre := 0
	for pre < len(x) && pre < len(y) && x[pre] == y[pre] {
		pre++
	}
	suf := 0
	for suf < len(x)-pre && suf < len(y)-pre && x[len(x)-1-suf] == y[len(y)-1-suf] {
		suf++
	}
	var ops []editOp
	for i := 0; i < pre; i++ {
		ops = append(ops, editOp{' ', i, i})
	}
	ops = append(ops, myers(x[pre:len(x)-suf], y[pre:len(y)-suf], pre, pre)...)
	for i := 0; i < suf; i++ {
		ops = append(ops, editOp{' ', len(x) - suf + i, len(y) - suf + i})
	}
	return ops
}

// myers is the O((N+M)D) greedy algorithm with a trace for backtracking;
// offA/offB shift the indices it reports.
func myers(x, y []int, offA, offB int) []editOp {
	n, m := len(x), len(y)
	replace := func() []editOp {
		ops := make([]editOp, 0, n+m)
		for i := 0; i < n; i++ {
			ops = append(ops, editOp{'-', offA + i, offB})
		}
		for j := 0; j < m; j++ {
			ops = append(ops, editOp{'+', offA + n, offB + j})
		}
		return ops
	}
	if n == 0 || m == 0 {
		return replace()
	}
	limit := min(n+m, maxDiffEdits)
	off := limit + 1
	v := make([]int, 2*limit+3)
	// trace[d] holds v[-d..d] as it was before step d.
	var trace [][]int
	found := -1
	for d := 0; d <= limit && found < 0; d++ {
		trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
		for k := -d; k <= d; k += 2 {
			var i int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				i = v[off+k+1]
			} else {
				i = v[off+k-1] + 1
			}
			j := i - k
			for i < n && j < m && x[i] == y[j] {
				i++
				j++
			}
			v[off+k] = i
			if i >= n && j >= m {
				found = d
				break
			}
		}
	}
	if found < 0 {
		return replace()
	}
	var rev []editOp
	i, j := n, m
	for d := found; d > 0; d-- {
		t := trace[d]
		at := func(k int) int { return t[k+d] }
		k := i - j
		pk := k - 1
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
		}
		pi := at(pk)
		pj := pi - pk
		for i > pi && j > pj {
			rev = append(rev, editOp{' ', offA + i - 1, offB + j - 1})
			i--
			j--
		}
		if i == pi {
			rev = append(rev, editOp{'+', offA + i, offB + j - 1})
		} else {
			rev = append(rev, editOp{'-', offA + i - 1, offB + j})
		}
		i, j = pi, pj
	}
	for i > 0 && j > 0 {
		rev = append(rev, editOp{' ', offA + i - 1, offB + j - 1})
		i--
		j--
	}
	ops := make([]editOp, len(rev))
	for n, o := range rev {
		ops[len(rev)-1-n] = o
	}
	return ops
}

// Format renders the change from a to b as a unified diff with the
// given context radius, in the format GNU `diff -u` prints (including
// "\ No newline at end of file"). It returns "" when a and b are equal.
func Format(nameA, nameB string, a, b []byte, radius int) string {
	la, lb := splitKeep(a), splitKeep(b)
	ops := diffLines(la, lb)
	changed := false
	for _, o := range ops {
		if o.kind != ' ' {
			changed = true
			break
		}
	}
	if !changed {
		return ""
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", nameA, nameB)
	line := func(prefix byte, l []byte) {
		out.WriteByte(prefix)
		out.Write(l)
		if len(l) == 0 || l[len(l)-1] != '\n' {
			out.WriteString("\n\\ No newline at end of file\n")
		}
	}
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		// A hunk: from radius lines before this change to radius lines
		// after the last change closer than 2*radius+1 context lines.
		start := i
		for c := 0; start > 0 && ops[start-1].kind == ' ' && c < radius; c++ {
			start--
		}
		end := i
		for {
			for end < len(ops) && ops[end].kind != ' ' {
				end++
			}
			run := 0
			for end+run < len(ops) && ops[end+run].kind == ' ' {
				run++
			}
			if end+run < len(ops) && run <= 2*radius {
				end += run
				continue
			}
			end += min(run, radius)
			break
		}
		aStart, bStart, aLen, bLen := -1, -1, 0, 0
		for _, o := range ops[start:end] {
			if o.kind != '+' {
				if aStart < 0 {
					aStart = o.a
				}
				aLen++
			}
			if o.kind != '-' {
				if bStart < 0 {
					bStart = o.b
				}
				bLen++
			}
		}
		if aStart < 0 {
			aStart = ops[start].a
		}
		if bStart < 0 {
			bStart = ops[start].b
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
		for _, o := range ops[start:end] {
			switch o.kind {
			case ' ':
				line(' ', la[o.a])
			case '-':
				line('-', la[o.a])
			case '+':
				line('+', lb[o.b])
			}
		}
		i = end
	}
	return out.String()
}

// hunkRange formats a 0-based start and a length as GNU diff does: an empty
// range names the line before it.
func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}
