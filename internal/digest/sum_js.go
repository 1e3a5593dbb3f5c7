//go:build js

package digest

// Sum256 returns the SHA-256 checksum of data. Under js/wasm it is this
// package's own (crypto/sha256 would link the FIPS 140 module).
func Sum256(data []byte) [32]byte { return sum256(data) }
