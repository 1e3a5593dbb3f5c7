// Package vpath is the grammar of workspace paths: Resolve puts a path a
// user or model wrote into the one form every driver, permission rule and
// hook sees (clean, slash-separated, root-relative, NFC), purely
// lexically. It is a leaf: the workspace uses it for every path, and the
// kernel for the paths its permission rules and hook matchers judge,
// without importing the workspace.
package vpath
