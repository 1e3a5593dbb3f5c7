// Package errkind names the kinds of failure a tool call reports
// (REFERENCE.md §3.6) and lets an error say which kind it is. It is a leaf:
// the packages that make errors (workspace, and the coming llm and mcp
// clients) and the kernel, which turns them into a result's errorKind,
// import it and not each other.
package errkind
