// Command llmtestserver serves the scripted provider server of llmtest on
// 127.0.0.1 for tests that cannot listen themselves (js/wasm in Node and
// Chromium, the SDK checks).
//
//	llmtestserver                 prints the URL on stdout, serves until killed
//	llmtestserver -- cmd args...  runs cmd with LLMTEST_URL set, exits with its status
//
// It builds natively only (it listens). It is not a test: the tests live beside llmtest and its users.
package main
