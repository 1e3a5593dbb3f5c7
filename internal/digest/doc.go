// Package digest is SHA-256 without crypto/sha256.
//
// The project hashes content to name it (a file's version, a schema's
// resource, an artifact): SHA-256, as crypto/sha256 computes it. Since Go
// 1.24 crypto/sha256 is part of the FIPS 140 module, whose import links
// AES, GCM, a DRBG, SHA-3, SHA-512 and HMAC too: about 53 KB of the
// wasm's gzip for one hash. Sum256 is Go's generic block function
// (crypto/internal/fips140/sha256/sha256block.go, BSD licence, Copyright
// 2009 The Go Authors), the one js/wasm runs anyway; digest_test.go checks
// it against crypto/sha256.
package digest
