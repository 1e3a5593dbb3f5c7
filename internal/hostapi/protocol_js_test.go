//go:build js

package hostapi

// protocolDrivers: none under js/wasm, where a directory workspace is the
// npm package's (services.directory); the transcripts that use $TMP are
// skipped here and replayed natively.
var protocolDrivers Drivers
