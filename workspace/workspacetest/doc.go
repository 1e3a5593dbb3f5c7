// Package workspacetest is the conformance suite every workspace driver
// must pass: Run(t, newDriver) exercises a driver through workspace.New, the
// portable type tools hold, so the suite checks what tools actually see.
// It uses only the standard library and runs natively and under GOOS=js
// GOARCH=wasm (Node, or Chromium for browser-only drivers).
//
// It is not a benchmark and not a test of the path resolver (workspace's
// own tests cover that); it tests drivers.
package workspacetest
