// Package kernel is the one invocation kernel every tool call goes through:
// the Tool contract and per-call scheduling Capabilities, the Registry (a
// value, no globals), invocation Origins, the governed pipeline (schema
// validation, hooks, permission, confirmation, budget, timeout,
// cancellation, recursion guard, sanitisation, result shaping), error
// kinds, lifecycle and events.
//
// Governance (governance.go) is the policy; Kernel.Invoke is the only
// entry point for hosts and the agent loop, and Call.Invoker the only one
// for tool code: nested calls go through the same pipeline, on the
// caller's stack and cancellation, and extension tools only ever get the
// plain nested origin.
//
// It is not a tool collection (package tools), knows nothing of JavaScript,
// and holds no workspace state; tools bring their own workspace.
package kernel
