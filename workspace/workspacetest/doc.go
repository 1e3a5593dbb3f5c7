// Package workspacetest is the conformance suite every workspace driver
// must pass: Run(t, newDriver), or RunHarness with a Reopen for drivers
// whose storage outlives them (go-cloud's drivertest harness), exercises a
// driver through workspace.New, the portable type tools hold, so the suite
// checks what tools actually see. Each optional extra the driver
// implements is checked against the workspace's fallback for it, and with
// Reopen, what was written must survive closing and reopening. It uses
// only the standard library and runs natively and under GOOS=js
// GOARCH=wasm (Node, or Chromium for browser-only drivers).
//
// It is not a benchmark and not a test of the path resolver (workspace's
// own tests cover that); it tests drivers.
package workspacetest
