package hostapi

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/tools/txtar"
)

var updateProtocol = flag.Bool("update", false, "rewrite testdata/protocol/*.txtar from the table's current answers")

// TestProtocolTranscripts replays every testdata/protocol/*.txtar through
// the real method table (Sessions, natively) and compares what comes back
// with the transcript. The `transcript` section is a script:
//
//	# text                     a comment, kept
//	> createSession OPTIONS    api.createSession(OPTIONS, host, hostKinds) (later lines use its handle)
//	> call METHOD ARGS         api.call(handle, METHOD, ARGS)
//	> call! METHOD ARGS        the same with a signal aborted before the call
//	> call& METHOD ARGS        the same, started in the background (see await)
//	> await                    the oldest background call's answer
//	> callSync METHOD [ARGS]   api.callSync(handle, METHOD, ARGS)
//	> callBytes METHOD ARGS [Q] api.callBytes(handle, METHOD, ARGS, bytes): Q is
//	                           the bytes as a Go-quoted string (absent: none)
//	> poll METHOD              callSync until the answer is not [] (not shown until then)
//	> held                     wait until the host holds a call ($hold below)
//	> release                  let the held host call answer
//	> nextEvents SUB           api.nextEvents(handle, SUB)
//	> unsubscribe SUB          api.unsubscribe(handle, SUB)
//	> …@H …                    (on any request verb) the handle H instead of the session's
//
// Every other line is the answer and is rewritten by -update:
//
//	< JSON                     the result, as the JSON string JS receives
//	                           (for callBytes: the metadata, when there is any)
//	< bytes Q                  the bytes a callBytes answered, Go-quoted
//	< error CODE: MESSAGE      a rejection (call) or {error, code} (callSync)
//	< detail: JSON             the rejection's detail, when it has one
//	host KIND PAYLOAD          a host-dispatcher call Go made during the request
//	host< ANSWER               what the scripted host (host.json) answered
//
// host.json maps a dispatcher kind to the JSON its handler returns;
// {"$reject": "message"} rejects, {"$hold": ANSWER} answers ANSWER after
// `> release`, {"$replace": [FROM, TO]} is a sanitiser (security kind)
// answering each text with FROM replaced by TO, {"$seq": [A, B, …]}
// answers A, then B, … (the last one again once they run out). hostKinds.json, when present, is the
// createSession's hostKindsJSON; absent, it is [] (a host with no script
// engine: program runs on JS engines and is covered by the npm tests).
// Scrubbed, because they are clocks: timeMs, startedAtMs, remainingMs
// (shown as 0). $TMP in a request is a fresh t.TempDir() of the
// transcript (a directory workspace's root), and that directory shows as
// $TMP in the answers. A transcript with $TMP or a `native` section (its
// answers quote an OS error) is replayed natively only.
func TestProtocolTranscripts(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "protocol", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no transcripts in testdata/protocol")
	}
	for _, p := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".txtar"), func(t *testing.T) {
			if laterTranscripts[t.Name()[len("TestProtocolTranscripts/"):]] {
				t.Skip("a codewasm_core build has not the methods or tools this transcript shows")
			}
			runTranscript(t, p)
		})
	}
}

// TestProtocolCoversEveryMethod: every row of the method table, and every
// api member that is not a row, has its transcript, named after it, that
// calls it the way JS does (call or callSync, as the row says; callBytes
// for the content methods). A new row brings its transcript.
func TestProtocolCoversEveryMethod(t *testing.T) {
	want := map[string]string{"createSession": "createSession", "nextEvents": "nextEvents", "unsubscribe": "unsubscribe"}
	for name, r := range methods {
		want[name] = "call"
		if r.sync {
			want[name] = "callSync"
		}
	}
	for _, r := range contentMethods {
		want[r.name] = "callBytes"
	}
	for _, name := range sortedNames(want) {
		verb := want[name]
		ar, err := txtar.ParseFile(filepath.Join("testdata", "protocol", name+".txtar"))
		if err != nil {
			t.Errorf("method %s has no transcript: %v (add testdata/protocol/%s.txtar; see TestProtocolTranscripts)", name, err, name)
			continue
		}
		script := string(section(ar, "transcript"))
		call := regexp.MustCompile(`(?m)^> ` + regexp.QuoteMeta(verb) + `[!&]?(@\d+)? ` + regexp.QuoteMeta(name) + `\b`)
		if verb == "createSession" || verb == name {
			call = regexp.MustCompile(`(?m)^> ` + regexp.QuoteMeta(name) + `(@\d+)? `)
		}
		if !call.MatchString(script) {
			t.Errorf("testdata/protocol/%s.txtar never calls %s through %s", name, name, verb)
		}
	}
}

func sortedNames(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func section(ar *txtar.Archive, name string) []byte {
	for _, f := range ar.Files {
		if f.Name == name {
			return f.Data
		}
	}
	return nil
}

// scriptedHost answers the dispatcher from host.json and logs each call.
type scriptedHost struct {
	answers map[string]json.RawMessage
	held    chan struct{} // a $hold answer has been asked for
	release chan struct{} // `> release` lets it answer
	mu      sync.Mutex
	log     []string
	seq     map[string]int // answers of a $seq kind given so far
}

func (h *scriptedHost) host(ctx context.Context, kind string, payload []byte) ([]byte, error) {
	h.mu.Lock()
	h.log = append(h.log, "host "+kind+" "+scrubClocks(string(payload)))
	a, ok := h.answers[kind]
	var special struct {
		Reject  *string           `json:"$reject"`
		Hold    json.RawMessage   `json:"$hold"`
		Replace []string          `json:"$replace"`
		Seq     []json.RawMessage `json:"$seq"`
	}
	if ok {
		_ = json.Unmarshal(a, &special)
	}
	switch {
	case !ok:
		h.log = append(h.log, "host< reject: no handler for host kind "+strconv.Quote(kind))
		h.mu.Unlock()
		return nil, fmt.Errorf("no handler for host kind %q", kind)
	case len(special.Seq) > 0:
		a = special.Seq[min(h.seq[kind], len(special.Seq)-1)]
		h.seq[kind]++
	case special.Reject != nil:
		h.log = append(h.log, "host< reject: "+*special.Reject)
		h.mu.Unlock()
		return nil, fmt.Errorf("%s", *special.Reject)
	case special.Hold != nil:
		h.mu.Unlock()
		h.held <- struct{}{}
		select {
		case <-h.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		h.mu.Lock()
		a = special.Hold
	case len(special.Replace) == 2:
		// A sanitiser: the text (sanitizeOutput) or every text (sanitizeAll)
		// with one string replaced.
		var p struct {
			Op    string   `json:"op"`
			Text  string   `json:"text"`
			Texts []string `json:"texts"`
		}
		_ = json.Unmarshal(payload, &p)
		r := strings.NewReplacer(special.Replace[0], special.Replace[1])
		if p.Op == "sanitizeAll" {
			out := make([]string, len(p.Texts))
			for i, t := range p.Texts {
				out[i] = r.Replace(t)
			}
			a, _ = json.Marshal(out)
		} else {
			a, _ = json.Marshal(map[string]string{"text": r.Replace(p.Text)})
		}
	}
	h.log = append(h.log, "host< "+string(a))
	h.mu.Unlock()
	return a, nil
}

func (h *scriptedHost) flush(out *[]string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	*out = append(*out, h.log...)
	h.log = nil
}

var clockKeys = regexp.MustCompile(`(\\?"(?:timeMs|startedAtMs|remainingMs)\\?":)\d+`)

func scrubClocks(s string) string { return clockKeys.ReplaceAllString(s, "${1}0") }

// answerLines renders what JS receives from one request.
func answerLines(v any, err error) []string {
	if b, ok := v.(*Bytes); ok && err == nil {
		var out []string
		if b.Meta != nil {
			out = answerLines(b.Meta, nil)
		}
		return append(out, "< bytes "+strconv.Quote(string(b.Data)))
	}
	if err != nil {
		code, detail := "", ""
		if e, ok := err.(*Error); ok {
			code, detail = e.Code, e.Detail
		}
		out := []string{"< error " + code + ": " + scrubClocks(err.Error())}
		if detail != "" {
			out = append(out, "< detail: "+scrubClocks(detail))
		}
		return out
	}
	b, mErr := json.Marshal(v)
	if mErr != nil {
		return []string{"< error INTERNAL: " + mErr.Error()}
	}
	return []string{"< " + scrubClocks(string(b))}
}

var requestLine = regexp.MustCompile(`^> (createSession|call|call!|call&|await|held|release|callSync|callBytes|poll|nextEvents|unsubscribe)(?:@(\d+))?(?: (.*))?$`)

func runTranscript(t *testing.T, path string) {
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := &scriptedHost{answers: map[string]json.RawMessage{}, held: make(chan struct{}, 1), release: make(chan struct{}), seq: map[string]int{}}
	if b := section(ar, "host.json"); b != nil {
		if err := json.Unmarshal(b, &h.answers); err != nil {
			t.Fatalf("%s: host.json: %v", path, err)
		}
		for k, a := range h.answers {
			var c bytes.Buffer
			if err := json.Compact(&c, a); err != nil {
				t.Fatal(err)
			}
			h.answers[k] = c.Bytes()
		}
	}
	env := Env{HostKinds: []string{}}
	if b := section(ar, "hostKinds.json"); b != nil {
		if err := json.Unmarshal(b, &env.HostKinds); err != nil {
			t.Fatalf("%s: hostKinds.json: %v", path, err)
		}
	}
	script := section(ar, "transcript")
	if script == nil {
		t.Fatalf("%s: no transcript section", path)
	}

	tmp := ""
	if runtime.GOOS == "js" && (section(ar, "native") != nil || bytes.Contains(script, []byte("$TMP"))) {
		t.Skip("replayed natively (a directory workspace, or an OS network error); under js/wasm the npm tests cover it")
	}
	if bytes.Contains(script, []byte("$TMP")) {
		tmp = t.TempDir()
		env.Drivers = protocolDrivers
	}
	s := NewSessions()
	ctx := context.Background()
	handle := 0
	type pending struct {
		done chan struct{}
		v    any
		err  error
	}
	var background []*pending
	var out []string
	defer func() {
		for _, p := range background {
			<-p.done
		}
	}()
	for _, line := range strings.Split(strings.TrimSuffix(string(script), "\n"), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			out = append(out, line)
			continue
		}
		if !strings.HasPrefix(line, "> ") {
			continue // an answer: recomputed below
		}
		m := requestLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("%s: unknown request %q", path, line)
		}
		out = append(out, line)
		verb, arg := m[1], m[3]
		id := handle
		if m[2] != "" {
			id, _ = strconv.Atoi(m[2])
		}
		if tmp != "" {
			arg = strings.ReplaceAll(arg, "$TMP", tmp)
		}
		method, args, _ := strings.Cut(arg, " ")
		var v any
		var err error
		switch verb {
		case "createSession":
			var host Host
			if len(h.answers) > 0 {
				host = h.host
			}
			var n int
			n, err = s.Create(ctx, []byte(arg), host, env)
			if err == nil {
				handle, v = n, n
			}
		case "call":
			v, err = s.Call(ctx, id, method, []byte(args))
		case "call!":
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			v, err = s.Call(cctx, id, method, []byte(args))
		case "call&":
			p := &pending{done: make(chan struct{})}
			background = append(background, p)
			go func() {
				defer close(p.done)
				p.v, p.err = s.Call(ctx, id, method, []byte(args))
			}()
			// No flush here: what the background call asks the host
			// shows at the next request's flush (after `> held`, which
			// waits for it), never sooner or later by how fast it ran.
			continue
		case "await":
			if len(background) == 0 {
				t.Fatalf("%s: await with no call& before it", path)
			}
			p := background[0]
			background = background[1:]
			select {
			case <-p.done:
			case <-time.After(time.Minute):
				t.Fatalf("%s: the background call did not finish", path)
			}
			v, err = p.v, p.err
		case "callSync":
			v, err = s.CallSync(id, method, []byte(args))
		case "callBytes":
			raw, in := splitBytesArgs(t, path, args)
			v, err = s.CallBytes(ctx, id, method, raw, in)
		case "poll":
			deadline := time.Now().Add(time.Minute)
			for {
				v, err = s.CallSync(id, method, []byte(args))
				if b, _ := json.Marshal(v); err != nil || string(b) != "[]" || time.Now().After(deadline) {
					break
				}
				time.Sleep(2 * time.Millisecond)
			}
		case "held":
			select {
			case <-h.held:
			case <-time.After(time.Minute):
				t.Fatalf("%s: no host call was held", path)
			}
			h.flush(&out)
			continue
		case "release":
			select {
			case h.release <- struct{}{}:
			case <-time.After(time.Minute):
				t.Fatalf("%s: no held host call to release", path)
			}
			continue
		case "nextEvents", "unsubscribe":
			sub, aerr := strconv.Atoi(strings.TrimSpace(arg))
			if aerr != nil {
				t.Fatalf("%s: %s takes a subscription number: %q", path, verb, line)
			}
			if verb == "unsubscribe" {
				s.Unsubscribe(id, sub)
				h.flush(&out)
				continue
			}
			v, err = s.NextEvents(ctx, id, sub)
		}
		h.flush(&out)
		out = append(out, answerLines(v, err)...)
	}
	got := []byte(strings.Join(out, "\n") + "\n")
	if tmp != "" {
		got = bytes.ReplaceAll(got, []byte(tmp), []byte("$TMP"))
	}
	if *updateProtocol {
		for i := range ar.Files {
			if ar.Files[i].Name == "transcript" {
				ar.Files[i].Data = got
			}
		}
		if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(got, script) {
		w, g := strings.Split(string(script), "\n"), strings.Split(string(got), "\n")
		i := 0
		for i < len(w) && i < len(g) && w[i] == g[i] {
			i++
		}
		at := func(ls []string) string {
			if i < len(ls) {
				return around(ls[i], firstDiff(w, g, i))
			}
			return "(end)"
		}
		t.Errorf("%s: the transcript differs at line %d (regenerate with -update if intended)\n  want: %s\n  got:  %s", path, i+1, at(w), at(g))
	}
}

// splitBytesArgs reads a callBytes line's arguments: the JSON, then the
// bytes as a Go-quoted string (nil when absent).
func splitBytesArgs(t *testing.T, path, args string) ([]byte, []byte) {
	d := json.NewDecoder(strings.NewReader(args))
	var raw json.RawMessage
	if err := d.Decode(&raw); err != nil {
		t.Fatalf("%s: callBytes %q: the arguments are not JSON: %v", path, args, err)
	}
	rest := strings.TrimSpace(args[d.InputOffset():])
	if rest == "" {
		return raw, nil
	}
	q, err := strconv.Unquote(rest)
	if err != nil {
		t.Fatalf("%s: callBytes %q: the bytes are not a Go-quoted string: %v", path, args, err)
	}
	return raw, []byte(q)
}

// firstDiff is the first byte where line i of want and got differ.
func firstDiff(want, got []string, i int) int {
	if i >= len(want) || i >= len(got) {
		return 0
	}
	c := 0
	for c < len(want[i]) && c < len(got[i]) && want[i][c] == got[i][c] {
		c++
	}
	return c
}

// around shows a long line near byte col.
func around(l string, col int) string {
	if len(l) <= 200 {
		return l
	}
	from, to := max(0, col-80), min(len(l), col+80)
	return fmt.Sprintf("(bytes %d-%d of %d) %s", from, to, len(l), l[from:to])
}
