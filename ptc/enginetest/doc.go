// Package enginetest is the conformance suite every ptc.Engine passes,
// natively or under js/wasm: Run checks the program tool's contract end
// to end over a real kernel and a memory workspace (Promise.all fan-out,
// the allow-list, maxToolCalls, maxOutputBytes truncation, a timed-out
// infinite loop, exception messages and lines, inputs round-tripping, a
// program inside a program), and RedTeam runs the escape pack in
// testdata/redteam.json, which the Node and browser test runners read too.
//
// It is test support: only tests import it.
package enginetest
