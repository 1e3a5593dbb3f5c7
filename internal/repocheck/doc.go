// Package repocheck holds tests about the repository itself: every file
// that imports syscall/js carries a js build constraint, every package has
// a doc.go holding its one package comment, and every RATIONALE.md answer
// without a table stays under 1.5 KB. It has no code of its own.
package repocheck
