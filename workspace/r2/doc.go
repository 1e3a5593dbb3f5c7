// Package r2 is a workspace driver over an object store with R2's
// semantics (Cloudflare R2, reached from a Worker through its binding):
// one object per file under the key <prefix>/<session>/<path>, a
// directory is a key prefix (plus a marker object <dir>/ when it was made
// empty), compare-and-swap is an ETag-conditional put, and listings use
// prefix, delimiter and cursor. Capabilities read, write and search (file
// tools only: no bash, no git; REFERENCE.md §4).
//
// The store is a Bucket; HostBucket is the production one, over the
// r2.* host kinds the Worker answers with its R2 binding
// (npm/src/r2host.mjs, passed per call: Go keeps no binding).
package r2
