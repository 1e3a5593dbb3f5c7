//go:build race

package enginetest

import "time"

// stopSlack: see slack.go; the race detector makes wasm memory growth
// several times slower.
const stopSlack = 20 * time.Second
