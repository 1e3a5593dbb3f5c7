// Package digest is SHA-256 without crypto/sha256 in the wasm.
//
// The project hashes content to name it (a file's version, a schema's
// resource, an artifact): SHA-256, as crypto/sha256 computes it. Since Go
// 1.24 crypto/sha256 is part of the FIPS 140 module, whose import links
// AES, GCM, a DRBG, SHA-3, SHA-512 and HMAC too: about 53 KB of the
// wasm's gzip for one hash. Under js/wasm Sum256 is this package's own,
// written from FIPS 180-4 (§4.2.2, §5.1.1, §5.3.3, §6.2); digest_test.go
// checks it against crypto/sha256 at every length to 192 bytes, at random
// sizes and on the standard's own examples. Natively Sum256 is
// crypto/sha256, which uses the CPU's SHA instructions (25x faster here).
package digest
