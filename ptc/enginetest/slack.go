//go:build !race

package enginetest

import "time"

// stopSlack is how far past its timeout and grace a red-team run may
// end before the harness calls it late.
const stopSlack = 2 * time.Second
