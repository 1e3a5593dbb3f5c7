package ptc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/ptc"
)

// scriptedHost is a host dispatcher that answers ptc.start, hands out
// calls in polls of the given sizes, collects the replies and then says
// done (with violation on the poll before done, when set). It is the
// protocol as HostEngine sees it; the real hosts are driven in
// hostengine_node_test.go.
type scriptedHost struct {
	batches   []int
	violation string
	start     map[string]any

	mu      sync.Mutex
	next    int
	replies map[int64]string
	polls   int
}

func (h *scriptedHost) call(ctx context.Context, kind string, payload []byte) ([]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch kind {
	case "ptc.start":
		if err := json.Unmarshal(payload, &h.start); err != nil {
			return nil, err
		}
		h.replies = map[int64]string{}
		return []byte(`{"run":1,"runtime":"scripted"}`), nil
	case "ptc.reply":
		var r struct {
			ID    int64
			OK    bool
			Value string
			Error string
		}
		if err := json.Unmarshal(payload, &r); err != nil {
			return nil, err
		}
		h.replies[r.ID] = r.Value + r.Error
		return []byte(`null`), nil
	case "ptc.stop":
		return []byte(`null`), nil
	case "ptc.poll":
		h.polls++
		var out struct {
			Calls     []map[string]any `json:"calls"`
			Done      map[string]any   `json:"done,omitempty"`
			Violation string           `json:"violation,omitempty"`
		}
		out.Calls = []map[string]any{}
		if h.polls <= len(h.batches) {
			for range h.batches[h.polls-1] {
				h.next++
				out.Calls = append(out.Calls, map[string]any{"id": h.next, "method": "readFile", "args": fmt.Sprintf(`["f%d"]`, h.next)})
			}
		} else if len(h.replies) < h.next {
			h.mu.Unlock()
			time.Sleep(time.Millisecond)
			h.mu.Lock()
		} else if h.violation != "" {
			out.Violation, h.violation = h.violation, ""
		} else {
			out.Done = map[string]any{"ok": true, "value": fmt.Sprint(len(h.replies))}
		}
		return json.Marshal(out)
	}
	return nil, fmt.Errorf("no handler for host kind %q", kind)
}

// countingBridge answers every call after a pause and records the most
// calls it had at once.
type countingBridge struct {
	now, peak, total atomic.Int64
}

func (b *countingBridge) Call(ctx context.Context, method string, args json.RawMessage) (json.RawMessage, error) {
	n := b.now.Add(1)
	defer b.now.Add(-1)
	b.total.Add(1)
	for p := b.peak.Load(); n > p && !b.peak.CompareAndSwap(p, n); p = b.peak.Load() {
	}
	time.Sleep(2 * time.Millisecond)
	return json.RawMessage(`"ok"`), nil
}

// TestHostEngineBoundsInFlight: however many calls one poll hands out
// (1,000 here), HostEngine runs at most maxInFlight bridge calls at once
// and answers every one.
func TestHostEngineBoundsInFlight(t *testing.T) {
	for _, tc := range []struct {
		name     string
		batches  []int
		inFlight int
		want     int64
	}{
		{"one poll of 1000, default 16", []int{1000}, 0, ptc.DefaultMaxInFlight},
		{"polls of 300, 500, 200, maxInFlight 4", []int{300, 500, 200}, 4, 4},
		{"maxInFlight 1", []int{50, 50}, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &scriptedHost{batches: tc.batches}
			b := &countingBridge{}
			v, err := ptc.NewHostEngine(h.call).Run(context.Background(), &ptc.Program{Name: "a.js", MaxInFlight: tc.inFlight}, b)
			total := 0
			for _, n := range tc.batches {
				total += n
			}
			if err != nil || string(v) != fmt.Sprint(total) || b.total.Load() != int64(total) {
				t.Fatalf("result %s err %v, %d bridge calls, want %d", v, err, b.total.Load(), total)
			}
			if p := b.peak.Load(); p > tc.want || p < 1 {
				t.Fatalf("%d bridge calls at once, want at most %d", p, tc.want)
			}
		})
	}
}

// TestHostEngineStartLimits: ptc.start carries the engine limits, the
// defaults filled in.
func TestHostEngineStartLimits(t *testing.T) {
	for _, tc := range []struct {
		p    ptc.Program
		want map[string]float64
	}{
		{ptc.Program{}, map[string]float64{"maxToolCalls": 20, "maxInFlight": 16, "maxResultBytes": 1 << 20, "memoryBytes": 64 << 20}},
		{ptc.Program{MaxToolCalls: 1000, MaxInFlight: 2, MaxResultBytes: 10, MemoryBytes: 8 << 20}, map[string]float64{"maxToolCalls": 1000, "maxInFlight": 2, "maxResultBytes": 10, "memoryBytes": 8 << 20}},
		{ptc.Program{MaxToolCalls: -1}, map[string]float64{"maxToolCalls": 20}},
	} {
		h := &scriptedHost{}
		if _, err := ptc.NewHostEngine(h.call).Run(context.Background(), &tc.p, &countingBridge{}); err != nil {
			t.Fatal(err)
		}
		for k, v := range tc.want {
			if h.start[k] != v {
				t.Errorf("%+v: start %s = %v, want %v", tc.p, k, h.start[k], v)
			}
		}
	}
}

// TestHostEngineViolation: a limit the engine reports in a poll fails the
// run with a *ptc.LimitError even though the script then succeeded.
func TestHostEngineViolation(t *testing.T) {
	h := &scriptedHost{batches: []int{3}, violation: "PTC script exceeded maxToolCalls=3"}
	_, err := ptc.NewHostEngine(h.call).Run(context.Background(), &ptc.Program{MaxToolCalls: 3}, &countingBridge{})
	var le *ptc.LimitError
	if !errors.As(err, &le) || le.Message != "PTC script exceeded maxToolCalls=3" {
		t.Fatalf("err %v", err)
	}
}

// TestHostEngineRefusesLargeArguments: arguments over maxResultBytes never
// reach the bridge, whatever the host sends; the reply says why.
func TestHostEngineRefusesLargeArguments(t *testing.T) {
	h := &scriptedHost{batches: []int{2}}
	b := &countingBridge{}
	if _, err := ptc.NewHostEngine(h.call).Run(context.Background(), &ptc.Program{MaxResultBytes: 5}, b); err != nil {
		t.Fatal(err)
	}
	if b.total.Load() != 0 || !strings.HasPrefix(h.replies[1], "the arguments of ctx.readFile are 6 bytes of JSON; the limit is 5") {
		t.Fatalf("%d bridge calls, reply %q", b.total.Load(), h.replies[1])
	}
}

// TestHostEngineFirstPoll: a host whose script settled inside ptc.start
// answers its one poll there (`first`) and has stopped the run itself:
// HostEngine takes the result, the running report and a violation from
// it, and sends no ptc.poll and no ptc.stop. A first that is not done is
// followed by polls and a stop as usual (here the poll fails).
func TestHostEngineFirstPoll(t *testing.T) {
	for _, tc := range []struct {
		name, first string
		want        string // the result, or the error's text
		kinds       []string
	}{
		{"done", `{"calls":[],"running":true,"done":{"ok":true,"value":"[1,2]"}}`, "[1,2]", []string{"ptc.start"}},
		{"failed", `{"calls":[],"running":true,"done":{"ok":false,"error":{"message":"RangeError: nope","line":1}}}`, "RangeError: nope", []string{"ptc.start"}},
		{"violation", `{"calls":[],"violation":"PTC script exceeded maxToolCalls=1","done":{"ok":true,"value":"1"}}`, "PTC script exceeded maxToolCalls=1", []string{"ptc.start"}},
		{"not done", `{"calls":[],"running":true}`, "no program run 7", []string{"ptc.start", "ptc.poll", "ptc.stop"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var kinds []string
			host := func(ctx context.Context, kind string, payload []byte) ([]byte, error) {
				mu.Lock()
				kinds = append(kinds, kind)
				mu.Unlock()
				if kind == "ptc.start" {
					return []byte(`{"run":7,"runtime":"scripted","first":` + tc.first + `}`), nil
				}
				if kind == "ptc.poll" {
					return nil, errors.New("no program run 7")
				}
				return []byte(`null`), nil
			}
			running := 0
			v, err := ptc.NewHostEngine(host).Run(context.Background(), &ptc.Program{Name: "a.js", Running: func() { running++ }}, &countingBridge{})
			got := string(v)
			if err != nil {
				got = err.Error()
			}
			if !strings.Contains(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			if strings.Join(kinds, ",") != strings.Join(tc.kinds, ",") {
				t.Fatalf("host kinds %v, want %v", kinds, tc.kinds)
			}
			if wantRunning := strings.Contains(tc.first, `"running":true`); (running == 1) != wantRunning {
				t.Fatalf("Running called %d times", running)
			}
		})
	}
}
