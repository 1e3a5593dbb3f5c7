//go:build !race

package enginetest

import "time"

// stopSlack is how far past its timeout and grace a red-team run may
// end before the harness calls it late. What it catches is an engine
// that ignores its deadline and runs on for ever; it is wide because a
// loaded 2-core machine (two test runs at once, load 40-50) made a
// 1 GiB 'x'.repeat that was stopped in time end 5.1 s after its start.
const stopSlack = 15 * time.Second
