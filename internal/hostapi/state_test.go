package hostapi

import (
	"encoding/json"
	"testing"
)

// TestSyncState: one syncState answers what a callSync of each method
// answers, refuses a method that is not a state read, and answers a
// closed session as isClosed does.
func TestSyncState(t *testing.T) {
	ts := NewSessions()
	id, err := ts.Create(t.Context(), nil, nil, Env{})
	noErr(t, err)
	raw, _ := json.Marshal(syncStateArgs{Methods: syncStateReadable})
	v, err := ts.CallSync(id, "syncState", raw)
	noErr(t, err)
	got := v.(map[string]string)
	for _, m := range syncStateReadable {
		one, err := ts.CallSync(id, m, nil)
		if err != nil { // a method a codewasm_core build leaves out
			if v, ok := got[m]; ok {
				t.Errorf("syncState %s = %s, callSync %s failed: %v", m, v, m, err)
			}
			continue
		}
		want, _ := json.Marshal(one)
		if got[m] != string(want) {
			t.Errorf("syncState %s = %s, callSync %s = %s", m, got[m], m, want)
		}
	}
	_, err = ts.CallSync(id, "syncState", []byte(`{"methods":["close"]}`))
	contains(t, errText(err), `syncState: "close" is not a state method`)
	_, err = ts.Call(t.Context(), id, "close", nil)
	noErr(t, err)
	_, err = ts.CallSync(id, "syncState", raw)
	_, want := ts.CallSync(id, "isClosed", nil)
	if errText(err) != errText(want) || want == nil {
		t.Errorf("syncState of a closed session: %v, want isClosed's %v", err, want)
	}
}
