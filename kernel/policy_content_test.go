package kernel_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/kernel"
)

// declared is an effectTool that declares its Effects.
type declared struct {
	*effectTool
	fx kernel.Effects
}

func (d declared) Effects(json.RawMessage) kernel.Effects { return d.fx }

// TestMutatingRuleClass: finding 3's "deny all writes". @mutating matches
// every call that may change something, by what the tool declares
// (Effects, or capabilities that are not read-only), never by its name;
// orchestrators declare no effects of their own.
func TestMutatingRuleClass(t *testing.T) {
	ro := kernel.Capabilities{ReadOnly: true}
	mut := kernel.Effects{Mutates: true}
	cases := []struct {
		name    string
		policy  kernel.PermissionPolicy
		fx      kernel.Effects
		unknown bool // Decide, which does not know the effects
		args    string
		want    kernel.Decision
	}{
		{"deny all writes: a mutating call", kernel.PermissionPolicy{Deny: []string{"@mutating"}, DefaultDecision: kernel.DecisionAllow}, mut, false, `{}`, kernel.DecisionDeny},
		{"deny all writes: a read-only call runs", kernel.PermissionPolicy{Deny: []string{"@mutating"}, DefaultDecision: kernel.DecisionAllow}, kernel.Effects{}, false, `{}`, kernel.DecisionAllow},
		{"path-scoped class: outside", kernel.PermissionPolicy{Deny: []string{"@mutating(path:secrets/**)"}, DefaultDecision: kernel.DecisionAllow}, mut, false, `{"file_path":"a.txt"}`, kernel.DecisionAllow},
		{"path-scoped class: inside, dot-dot spelling", kernel.PermissionPolicy{Deny: []string{"@mutating(path:secrets/**)"}, DefaultDecision: kernel.DecisionAllow}, mut, false, `{"file_path":"x/../secrets/a"}`, kernel.DecisionDeny},
		{"ask for every change", kernel.PermissionPolicy{Ask: []string{"@mutating"}, Allow: []string{"*"}}, mut, false, `{}`, kernel.DecisionAllow},
		{"ask for every change, no allow", kernel.PermissionPolicy{Ask: []string{"@mutating"}, DefaultDecision: kernel.DecisionAllow}, mut, false, `{}`, kernel.DecisionAsk},
		{"allow class", kernel.PermissionPolicy{Allow: []string{"@mutating(path:src/**)"}, DefaultDecision: kernel.DecisionDeny}, mut, false, `{"file_path":"src/a"}`, kernel.DecisionAllow},
		{"unknown effects: deny class matches", kernel.PermissionPolicy{Deny: []string{"@mutating"}, DefaultDecision: kernel.DecisionAllow}, kernel.Effects{}, true, `{}`, kernel.DecisionDeny},
		{"unknown effects: allow class does not", kernel.PermissionPolicy{Allow: []string{"@mutating"}, DefaultDecision: kernel.DecisionDeny}, kernel.Effects{}, true, `{}`, kernel.DecisionDeny},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.policy.Validate(); err != nil {
				t.Fatal(err)
			}
			var got kernel.Decision
			if tc.unknown {
				got, _ = tc.policy.Decide("anything", json.RawMessage(tc.args))
			} else {
				got, _ = tc.policy.DecideCall("anything", json.RawMessage(tc.args), tc.fx)
			}
			if got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
	if err := (kernel.PermissionPolicy{Deny: []string{"@writes"}}).Validate(); err == nil || !strings.Contains(err.Error(), `unknown rule class "@writes"`) {
		t.Fatalf("Validate(@writes) = %v", err)
	}
	if h, _ := (kernel.PermissionPolicy{Deny: []string{"@mutating(path:secrets/**)"}}).Hidden("grep", true); h != nil {
		t.Fatal("a class rule hid paths from a search")
	}

	// Through the pipeline: which tools the class denies follows what
	// they declare.
	f := newKernel(t, kernel.Governance{Permission: kernel.PermissionPolicy{Deny: []string{"@mutating"}, DefaultDecision: kernel.DecisionAllow}}, []kernel.Tool{
		newEffect("conservative"), // not read-only: mutates
		&effectTool{name: "reader", caps: ro, schema: effectSchema},
		declared{newEffect("dry"), kernel.Effects{}},
		declared{newEffect("mover"), mut},
		fan{"fan"}, // an orchestrator that does not declare: mutates, conservatively
	})
	for tool, denied := range map[string]bool{"conservative": true, "reader": false, "dry": false, "mover": true, "fan": true} {
		res := f.call(t, kernel.OriginAgent, tool, `{"msg":"x"}`)
		if tool == "fan" {
			res = f.call(t, kernel.OriginAgent, tool, `{"calls":[]}`)
		}
		if got := res.ExitCode != 0 && kindOf(res) == kernel.ErrHookDenied; got != denied {
			t.Errorf("%s: denied=%v, want %v (%q)", tool, got, denied, res.Output)
		}
	}
	// Trusted host calls skip the gate, the class with it.
	if res := f.call(t, kernel.OriginHostTrusted, "mover", `{"msg":"x"}`); res.ExitCode != 0 {
		t.Errorf("trusted call: %q", res.Output)
	}
}

// TestReadRulesGovernContent: finding 3. A call whose answer depends on the
// content of the files it names (Effects.ReadsContent) is judged by the
// path-scoped read rules for those files too: denied, or asked when it was
// allowed; and every governed call is told which contents it must not
// return (Call.ContentHidden).
func TestReadRulesGovernContent(t *testing.T) {
	secret := `{"msg":"x","file_path":"secrets/k.txt"}`
	cases := []struct {
		name   string
		policy kernel.PermissionPolicy
		fx     kernel.Effects
		args   string
		want   kernel.Decision
		rule   string // the rule that decided, "" for any
	}{
		{"deny read rule denies a content reader", kernel.PermissionPolicy{Deny: []string{"read(path:secrets/**)"}, Allow: []string{"*"}}, kernel.Effects{ReadsContent: true}, secret, kernel.DecisionDeny, "read(path:secrets/**)"},
		{"bare pattern and a tool glob", kernel.PermissionPolicy{Deny: []string{"r*(secrets/*)"}, Allow: []string{"*"}}, kernel.Effects{ReadsContent: true}, `{"file_path":"./secrets/k.txt"}`, kernel.DecisionDeny, "r*(secrets/*)"},
		{"files[] touching one hidden path", kernel.PermissionPolicy{Deny: []string{"*(path:secrets/**)"}, Allow: []string{"peek"}}, kernel.Effects{ReadsContent: true}, `{"files":[{"path":"a"},{"path":"secrets/b"}]}`, kernel.DecisionDeny, "*(path:secrets/**)"},
		{"ask read rule asks for an allowed reader", kernel.PermissionPolicy{Ask: []string{"read(path:secrets/**)"}, Allow: []string{"*"}}, kernel.Effects{ReadsContent: true}, secret, kernel.DecisionAsk, "read(path:secrets/**)"},
		{"other paths unaffected", kernel.PermissionPolicy{Deny: []string{"read(path:secrets/**)"}, Allow: []string{"*"}}, kernel.Effects{ReadsContent: true}, `{"file_path":"a.txt"}`, kernel.DecisionAllow, ""},
		{"a tool that reads no content is unaffected", kernel.PermissionPolicy{Deny: []string{"read(path:secrets/**)"}, Allow: []string{"*"}}, kernel.Effects{Mutates: true}, secret, kernel.DecisionAllow, ""},
		{"a whole-tool read rule is about the read tool", kernel.PermissionPolicy{Deny: []string{"read"}, Allow: []string{"*"}}, kernel.Effects{ReadsContent: true}, secret, kernel.DecisionAllow, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got, rule := tc.policy.DecideCall("peek", json.RawMessage(tc.args), tc.fx); got != tc.want || tc.rule != "" && rule != tc.rule {
				t.Fatalf("got %s by %q, want %s", got, rule, tc.want)
			}
		})
	}

	// Through the pipeline: the reason says why; Call.ContentHidden is set
	// for governed calls only.
	var hidden [2]bool
	peek := declared{newEffect("peek"), kernel.Effects{ReadsContent: true}}
	tell := newEffect("tell")
	tell.onRun = func(_ context.Context, call *kernel.Call) (*kernel.Result, error) {
		hidden = [2]bool{call.IsContentHidden("secrets/k.txt"), call.IsContentHidden("a.txt")}
		return kernel.OK("ok", nil), nil
	}
	f := newKernel(t, kernel.Governance{Permission: kernel.PermissionPolicy{Deny: []string{"read(path:secrets/**)"}, Allow: []string{"*"}}}, []kernel.Tool{peek, tell})
	res := f.call(t, kernel.OriginAgent, "peek", secret)
	if res.ExitCode == 0 || peek.runs.Load() != 0 || !strings.Contains(res.Output, `permission rule "read(path:secrets/**)": what it returns depends on the content of the file it names`) {
		t.Fatalf("exit %d %q", res.ExitCode, res.Output)
	}
	f.call(t, kernel.OriginNested, "tell", `{"msg":"x"}`)
	if hidden != [2]bool{true, false} {
		t.Fatalf("governed call: ContentHidden(secrets/k.txt, a.txt) = %v", hidden)
	}
	f.call(t, kernel.OriginHostTrusted, "tell", `{"msg":"x"}`)
	if hidden != [2]bool{false, false} {
		t.Fatalf("trusted call: ContentHidden = %v", hidden)
	}
}
