//go:build !codewasm_core

package hostapi

// laterTranscripts: every transcript runs in the full build
// (later_core_test.go lists those a codewasm_core build skips).
var laterTranscripts map[string]bool
