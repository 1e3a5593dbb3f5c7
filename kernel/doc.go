// Package kernel is the one invocation kernel every tool call goes through:
// the Tool contract and per-call scheduling Capabilities, the Registry (a
// value, no globals), invocation Origins, the governed pipeline (schema
// validation, hooks, permission, confirmation, budget, timeout,
// cancellation, recursion guard, sanitisation, result shaping), error
// kinds, lifecycle and events.
//
// It is not a tool collection (package tools), knows nothing of JavaScript,
// and holds no workspace state; tools bring their own workspace.
package kernel
