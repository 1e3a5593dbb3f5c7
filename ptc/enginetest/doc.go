// Package enginetest is the conformance suite every ptc.Engine passes,
// natively or under js/wasm: Run checks the program tool's contract end
// to end over a real kernel and a memory workspace (Promise.all fan-out,
// the allow-list, maxToolCalls, maxOutputBytes truncation, a timed-out
// infinite loop, exception messages and lines, inputs round-tripping, a
// program inside a program) and the engine's own limits (1 GiB
// allocations, 1,000 concurrent ctx calls, a flood of calls past
// maxToolCalls, oversized results and arguments, stopping at a deadline
// mid-allocation); RedTeam runs the escape pack in
// npm/test/ptc-redteam.fixture.mjs, which the Node and browser test
// runners read too.
//
// It is test support: only tests import it.
package enginetest
