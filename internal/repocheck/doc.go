// Package repocheck holds tests about the repository itself: every file
// that imports syscall/js carries a js build constraint, and every package
// has a doc.go. It has no code of its own.
package repocheck
