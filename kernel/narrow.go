package kernel

import (
	"context"
	"fmt"
	"slices"
)

// Narrowing is a permission policy that binds every invocation made under
// a context, at any depth, on top of the session's policy: a delegated
// agent's or a skill's. It can only narrow: a call it denies is denied
// whatever the session's policy says, and a call it allows still has to
// pass the session's policy. AskDenies says what its ask means: true
// denies the call, false leaves the decision to the session's policy (the
// delegated agent inherits the session's confirmation).
type Narrowing struct {
	// Label names the narrowing caller in denials ("explore agent").
	Label     string
	Policy    PermissionPolicy
	AskDenies bool
}

type narrowKey struct{}

// WithNarrowing returns a context under which every untrusted invocation
// (the agent's, nested and governed calls) must pass n as well as the
// narrowings ctx already carries and the session's policy. Trusted host
// calls skip it, as they skip the session's policy.
func WithNarrowing(ctx context.Context, n Narrowing) context.Context {
	prev, _ := ctx.Value(narrowKey{}).([]Narrowing)
	return context.WithValue(ctx, narrowKey{}, append(slices.Clip(prev), n))
}

// narrowed is the first denial of the context's narrowings, or nil.
func (v *invocation) narrowed(ctx context.Context, a *lazyArgs, fx Effects) *denial {
	ns, _ := ctx.Value(narrowKey{}).([]Narrowing)
	for _, n := range ns {
		d, rule, _ := n.Policy.decide(v.name, a, &fx)
		switch {
		case d == DecisionDeny && rule == "":
			return &denial{reason: fmt.Sprintf("tool %s denied by the %s's default permission decision", v.name, n.Label)}
		case d == DecisionDeny:
			return &denial{reason: fmt.Sprintf("tool %s denied by the %s's permission rule %q", v.name, n.Label, rule)}
		case d == DecisionAsk && n.AskDenies:
			return &denial{reason: fmt.Sprintf("tool %s needs confirmation, which the %s does not inherit", v.name, n.Label)}
		}
	}
	return nil
}

// PutArtifact stores content in the session's artifact store under tool
// (a whole output a tool shows only part of: a delegated agent's answer)
// and returns it; Artifact(uri) reads it back while it is kept.
func (k *Kernel) PutArtifact(tool, content string, shown int) Artifact {
	a, _ := k.artifacts.put(tool, content, shown)
	return a
}
