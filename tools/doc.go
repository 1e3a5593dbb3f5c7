// Package tools holds the built-in workspace tools: read, write, edit,
// patch, grep, glob, ls, and the batch orchestrator. Each declares its JSON
// Schema and computes its scheduling capabilities per invocation; Builtins
// assembles the surface a workspace's capabilities can serve.
//
// It is not the kernel: tools never check policy, and reach other tools
// only through the kernel's nested Invoker.
package tools
