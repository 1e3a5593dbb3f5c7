//go:build !js

package digest

import "crypto/sha256"

// Sum256 returns the SHA-256 checksum of data. Natively it is crypto/sha256,
// which uses the CPU's SHA instructions where there are some.
func Sum256(data []byte) [32]byte { return sha256.Sum256(data) }
