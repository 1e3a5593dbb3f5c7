// Package dirfs is the directory workspace driver: a real directory on
// disk. Natively every file is opened through os.Root, so no path, and no
// symbolic link swapped in while a call runs, reaches outside the root.
// Under js/wasm the wasm never touches the disk: the host (the npm
// package in Node, npm/src/dirhost.mjs) hands Go an object built on
// node:fs that opens each file and verifies the opened descriptor
// through /proc/self/fd before reading or writing (OpenHost).
//
// Both hosts share the driver's semantics (FS, over a backend of a few
// file operations): compare-and-swap versions are content hashes, a write
// creates missing parents, and a write whose path has a symbolic link
// leading out of the root is refused with workspace.ErrPathEscape and
// creates nothing. A symbolic link inside the root is followed; listings
// show links as workspace.KindLink, so walks never descend into them.
// Extras: DataReader and LineReader (a search or a range read hashes
// nothing) and Appender (O_APPEND); walks are the workspace's own, over
// ReadDir (a Walker measured no faster: a walk is bound by the syscalls).
// Natively os.Root also refuses absolute symbolic links, even ones that
// point inside the root.
package dirfs
