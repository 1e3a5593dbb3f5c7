package kernel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
)

// hooksFor lists the hooks for ev whose matchers select a call of t with
// args; what the call touches is asked of t once, and only if a matcher
// needs it.
func (k *Kernel) hooksFor(ev HookEvent, t Tool, name string, args json.RawMessage) []Hook {
	k.gmu.RLock()
	defer k.gmu.RUnlock()
	var out []Hook
	a := lazyArgsOf(t, args)
	for _, h := range k.hooks {
		if h.Event != ev || !h.Matcher.selects(name) {
			continue
		}
		if h.Matcher.needsArgs() && !h.Matcher.matches(a.get()) {
			continue
		}
		out = append(out, h)
	}
	return out
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// MaxHookRounds bounds how many times the pre_tool_use chain runs for one
// call when hooks keep rewriting its arguments.
const MaxHookRounds = 8

// preHooks runs the matching pre_tool_use hooks in registration order.
// A rewrite starts the chain again from the first hook, with the matchers
// asked again for the new arguments, until one whole pass rewrites
// nothing: every hook's last answer was given for the arguments the tool
// will run with, so no rewrite, by an earlier hook or a later one, can
// steer a call around a hook that guards it. A hook must therefore answer
// a rewrite it made itself with no change (a rewrite is compared as JSON
// data, not bytes); hooks that are still rewriting after MaxHookRounds
// passes deny the call, naming them. skip ends the chain only in a pass
// that rewrote nothing.
func (v *invocation) preHooks(ctx context.Context) (*denial, *Error) {
	var rewriters []string
	for round := 1; ; round++ {
		rewrote := ""
		for _, h := range v.k.hooksFor(HookPreToolUse, v.t, v.name, v.args) {
			req := HookRequest{Event: HookPreToolUse, ToolID: v.id, ToolName: v.name, Args: v.args, Origin: v.sc.origin, ParentID: v.sc.parent}
			to := orDefault(h.Timeout, DefaultHookTimeout)
			r, err, timedOut := bounded(ctx, to, func(c context.Context) (HookResponse, error) { return h.Handler(c, req) })
			switch {
			case timedOut:
				return &denial{reason: fmt.Sprintf("hook %s did not answer within %v", h.ID, to)}, nil
			case err != nil:
				return &denial{reason: fmt.Sprintf("hook %s failed: %v", h.ID, err)}, nil
			}
			switch r.Action {
			case HookBlock:
				return &denial{reason: reasonOr(r.Reason, "blocked by hook "+h.ID), retryable: r.Retryable, retryAfter: r.Delay}, nil
			case HookRetry:
				return &denial{reason: reasonOr(r.Reason, "hook "+h.ID+" asks to retry later"), retryable: true, retryAfter: r.Delay}, nil
			case "", HookContinue, HookSkip:
			default:
				return &denial{reason: fmt.Sprintf("hook %s answered unknown action %q", h.ID, r.Action)}, nil
			}
			if len(r.Modified) > 0 && !sameJSON(r.Modified, v.args) {
				if e := validateWith(v.k.schemas, v.name, schemaOf(v.t), r.Modified, isBuiltin(v.t)); e != nil {
					e.Msg = "hook " + h.ID + " rewrote the arguments: " + e.Msg
					e.Kind.Message = e.Msg
					return nil, e
				}
				v.args = append(json.RawMessage(nil), r.Modified...)
				v.pub = nil
				rewrote = h.ID
				break
			}
			if r.Action == HookSkip {
				return nil, nil // no rewrite in this pass: a rewrite breaks it
			}
		}
		if rewrote == "" {
			return nil, nil
		}
		if !slices.Contains(rewriters, rewrote) {
			rewriters = append(rewriters, rewrote)
		}
		if round == MaxHookRounds {
			return &denial{reason: fmt.Sprintf("pre_tool_use hooks %s were still rewriting the arguments after %d passes; a hook must leave arguments it already rewrote unchanged",
				strings.Join(rewriters, ", "), MaxHookRounds)}, nil
		}
	}
}

// sameJSON reports whether a and b are the same JSON data, key order and
// spacing aside. Text that does not parse compares as bytes.
func sameJSON(a, b json.RawMessage) bool {
	if string(a) == string(b) {
		return true
	}
	var x, y any
	da, db := json.NewDecoder(bytes.NewReader(a)), json.NewDecoder(bytes.NewReader(b))
	da.UseNumber()
	db.UseNumber()
	if da.Decode(&x) != nil || db.Decode(&y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func reasonOr(r, def string) string {
	if r != "" {
		return r
	}
	return def
}

// postHooks runs the matching post_tool_use hooks; their failures and
// timeouts are ignored (the call already happened). A hook answering block
// or retry cannot undo the call; it withholds the result: the call ends as
// a hook_denied failure whose output says the side effect, if any, has
// happened. Later hooks do not run.
func (v *invocation) postHooks(ctx context.Context, res *Result) *Result {
	for _, h := range v.k.hooksFor(HookPostToolUse, v.t, v.name, v.args) {
		cp := *res
		req := HookRequest{Event: HookPostToolUse, ToolID: v.id, ToolName: v.name, Args: v.args, Origin: v.sc.origin, ParentID: v.sc.parent, Result: &cp}
		r, err, _ := bounded(ctx, orDefault(h.Timeout, DefaultHookTimeout), func(c context.Context) (HookResponse, error) { return h.Handler(c, req) })
		if err != nil {
			continue
		}
		switch r.Action {
		case HookSkip:
			return res
		case HookBlock, HookRetry:
			reason := v.san.str(reasonOr(r.Reason, "blocked by post_tool_use hook "+h.ID))
			effect := "its side effect, if any, has happened"
			if res.ExitCode != 0 {
				effect = "the call had failed"
			}
			out := fmt.Sprintf("Tool %s ran, but post_tool_use hook %s withheld its result: %s (%s; a post-hook cannot undo it)", v.name, h.ID, reason, effect)
			return &Result{Output: out, ExitCode: 1,
				ErrorKind: &ErrorKind{Type: ErrHookDenied, Reason: reason},
				Metadata:  map[string]any{"post_hook_blocked": map[string]any{"hook_id": h.ID, "reason": reason, "tool_exit_code": res.ExitCode}}}
		}
	}
	return res
}

// gate is the safety gate for untrusted origins: skill restriction,
// permission policy, confirmation.
func (v *invocation) gate(ctx context.Context) *denial {
	g := v.k.cfg.Governance
	if g.SkillRestriction.Enabled && !slices.ContainsFunc(g.SkillRestriction.AllowedTools, func(p string) bool { return matchName(p, v.name) }) {
		return &denial{reason: fmt.Sprintf("tool %s is not allowed by the active skill", v.name)}
	}
	// One look at what the call touches and does, for the narrowings and
	// the policy alike.
	a, fx := lazyArgsOf(v.t, v.args), effectsOf(v.t, v.args)
	if d := v.narrowed(ctx, a, fx); d != nil {
		return d
	}
	d, rule, content := g.Permission.decide(v.name, a, &fx)
	switch d {
	case DecisionAllow:
		return nil
	case DecisionDeny:
		switch {
		case rule == "":
			return &denial{reason: fmt.Sprintf("tool %s denied by the default permission decision", v.name)}
		case content:
			return &denial{reason: fmt.Sprintf("tool %s denied by permission rule %q: what it returns depends on the content of the file it names, which that rule keeps from view", v.name, rule)}
		}
		return &denial{reason: fmt.Sprintf("tool %s denied by permission rule %q", v.name, rule)}
	}
	return v.confirm(ctx)
}

func (v *invocation) confirm(ctx context.Context) *denial {
	k := v.k
	g := k.cfg.Governance
	var c Confirmer = g.Confirmer
	if c == nil && k.confirm != nil {
		c = k.confirm
	}
	if c == nil {
		return &denial{reason: fmt.Sprintf("tool %s needs confirmation and no confirmation manager is configured", v.name)}
	}
	to := orDefault(g.Confirmation.DefaultTimeout, DefaultConfirmationTimeout)
	v.ev(EventConfirmationRequired, map[string]any{"tool_id": v.id, "tool_name": v.name, "args": v.pubArgs(), "timeout_ms": to.Milliseconds()})
	req := ConfirmRequest{ToolID: v.id, ToolName: v.name, Args: v.args, Origin: v.sc.origin, ParentID: v.sc.parent, Timeout: to}
	var d ConfirmDecision
	var err error
	timedOut := false
	if m, own := c.(*confirmManager); own {
		// The kernel's own manager honours ctx: call it inline, so its
		// pending entry is gone when the call ends.
		cctx, cancel := context.WithTimeout(ctx, to)
		d, err = m.Confirm(cctx, req)
		timedOut = err != nil && ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded)
		cancel()
	} else {
		d, err, timedOut = bounded(ctx, to, func(c2 context.Context) (ConfirmDecision, error) { return c.Confirm(c2, req) })
	}
	if timedOut {
		if g.Confirmation.TimeoutAction == TimeoutAutoApprove {
			v.ev(EventConfirmationTimeout, map[string]any{"tool_id": v.id, "action_taken": "auto_approved"})
			return nil
		}
		v.ev(EventConfirmationTimeout, map[string]any{"tool_id": v.id, "action_taken": "rejected"})
		return &denial{reason: fmt.Sprintf("confirmation of %s timed out after %d ms", v.name, to.Milliseconds())}
	}
	if err != nil {
		if ctx.Err() != nil {
			return &denial{reason: "cancelled while waiting for confirmation"}
		}
		return &denial{reason: fmt.Sprintf("confirmation of %s failed: %v", v.name, err)}
	}
	p := map[string]any{"tool_id": v.id, "approved": d.Approved}
	if d.Reason != "" {
		p["reason"] = v.san.str(d.Reason)
	}
	v.ev(EventConfirmationReceived, p)
	if !d.Approved {
		return &denial{reason: reasonOr(d.Reason, "rejected by the user")}
	}
	return nil
}

func (v *invocation) checkBudget(ctx context.Context) *denial {
	k := v.k
	k.gmu.RLock()
	g, to := k.budget, k.budgetTimeout
	k.gmu.RUnlock()
	if g == nil {
		return nil
	}
	to = orDefault(to, DefaultBudgetTimeout)
	req := BudgetRequest{ToolID: v.id, ToolName: v.name, Args: v.args, Origin: v.sc.origin}
	d, err, timedOut := bounded(ctx, to, func(c context.Context) (BudgetDecision, error) { return g.CheckBeforeTool(c, req) })
	switch {
	case timedOut:
		return &denial{reason: fmt.Sprintf("Budget exhausted: the budget guard did not answer within %v", to)}
	case err != nil:
		return &denial{reason: fmt.Sprintf("Budget exhausted: the budget guard failed: %v", err)}
	}
	hit := func(kind string) {
		p := map[string]any{"resource": v.san.str(d.Resource), "kind": kind, "consumed": d.Consumed, "limit": d.Limit}
		if d.Message != "" {
			p["message"] = v.san.str(d.Message)
		}
		v.ev(EventBudgetThresholdHit, p)
	}
	switch d.Action {
	case "", BudgetAllow:
		return nil
	case BudgetSoft:
		hit("soft")
		return nil
	case BudgetHard:
		hit("hard")
	case BudgetDeny:
	default:
		return &denial{reason: fmt.Sprintf("Budget exhausted: the budget guard answered unknown action %q", d.Action)}
	}
	return &denial{reason: "Budget exhausted" + suffix(d.Message)}
}

func suffix(m string) string {
	if m == "" {
		return ""
	}
	return ": " + m
}
