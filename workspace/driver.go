package workspace

import (
	"context"
	"encoding/hex"
	"fmt"
	"github.com/a3s-lab/code-wasm/internal/digest"
	"io/fs"
	"time"

	"github.com/a3s-lab/code-wasm/errkind"
)

// Capabilities is what a driver can serve. The tool surface is assembled
// from it (tools.zh.md's tool-layer table, REFERENCE.md §4): read → read, ls;
// write → write; read+write → edit, patch; search → grep, glob; exec → bash;
// git → git.
type Capabilities struct {
	Read   bool `json:"read"`
	Write  bool `json:"write"`
	Search bool `json:"search"`
	Exec   bool `json:"exec"`
	Git    bool `json:"git"`
}

// Kind is the type of a directory entry, spelled as the tools show it.
type Kind string

const (
	KindFile    Kind = "file"
	KindDir     Kind = "dir"
	KindLink    Kind = "link"
	KindUnknown Kind = "unknown"
)

// Entry describes one file or directory.
type Entry struct {
	Name    string    `json:"name"` // base name; "." for the root
	Kind    Kind      `json:"kind"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"modTime"`
}

// Version is an opaque compare-and-swap token: a hash of a file's content.
// The empty Version means "no condition" to drivers and is refused by
// Workspace.WriteFileIfVersion.
type Version string

// VersionOf is the content hash every built-in driver uses, so tokens from
// different drivers over the same bytes agree.
func VersionOf(data []byte) Version {
	sum := digest.Sum256(data)
	return Version("sha256:" + hex.EncodeToString(sum[:16]))
}

// Errors a driver returns, wrapped by the workspace in a *PathError.
// Not-found is fs.ErrNotExist, so errors.Is(err, fs.ErrNotExist) works.
var (
	ErrNotExist    = fs.ErrNotExist
	ErrExist       = fs.ErrExist
	ErrIsDir       = errkind.New(errkind.InvalidArgument, "is a directory")
	ErrNotDir      = errkind.New(errkind.InvalidArgument, "not a directory")
	ErrConflict    = errkind.New(errkind.VersionConflict, "version conflict")
	ErrUnsupported = errkind.New(errkind.Unsupported, "not supported by this workspace")
)

// ConflictError reports a stale compare-and-swap. errors.Is(err, ErrConflict).
type ConflictError struct {
	Path     string
	Expected Version
	Actual   Version
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("version conflict on %s: expected %s, found %s (re-read the file and retry)", e.Path, e.Expected, e.Actual)
}

func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// Kind reports errkind.VersionConflict.
func (e *ConflictError) Kind() errkind.Kind { return errkind.VersionConflict }

// Conflict reports the path and both versions.
func (e *ConflictError) Conflict() (path, expected, actual string) {
	return e.Path, string(e.Expected), string(e.Actual)
}

// PathError records the operation and path that failed, as *fs.PathError does.
// The workspace wraps driver errors in it exactly once.
type PathError struct {
	Op   string
	Path string
	Err  error
}

func (e *PathError) Error() string {
	return e.Op + " " + Display(e.Path) + ": " + e.Err.Error()
}

func (e *PathError) Unwrap() error { return e.Err }

// ErrorPath is the path the operation failed on (errkind.Pathed).
func (e *PathError) ErrorPath() string { return e.Path }

// Driver is the storage behind a Workspace. Paths given to a driver are
// already resolved: clean, slash-separated, relative, "." for the root.
// Drivers never check paths for escapes; the workspace did.
//
// Optional extras are discovered by type assertion, as io/fs does, and
// the workspace falls back to Driver's methods without them: LineReader,
// Appender, Putter, Walker, RunWalker, FileLister, DataReader. The
// conformance suite (workspacetest) checks each one a driver implements
// against its fallback.
type Driver interface {
	// Capabilities is a constant for the life of the driver.
	Capabilities() Capabilities
	// Stat returns ErrNotExist for a missing path.
	Stat(ctx context.Context, name string) (Entry, error)
	// ReadFile returns the content and its version. ErrNotExist if missing,
	// ErrIsDir for a directory. The slice may be shared with the driver:
	// callers must not modify it.
	ReadFile(ctx context.Context, name string) ([]byte, Version, error)
	// WriteFile replaces the content, creating missing parent directories.
	// If ifVersion is not empty, the write happens only if the current
	// version matches; otherwise it fails with a *ConflictError (and a
	// missing file is a conflict too). ErrIsDir if name is a directory,
	// ErrNotDir if a parent is a file. The driver may keep data: the caller
	// must not modify it afterwards.
	WriteFile(ctx context.Context, name string, data []byte, ifVersion Version) (Version, error)
	// ReadDir lists a directory sorted by name. ErrNotExist, ErrNotDir.
	ReadDir(ctx context.Context, name string) ([]Entry, error)
	// MkdirAll creates a directory and its parents. ErrNotDir if a
	// component is a file.
	MkdirAll(ctx context.Context, name string) error
	// Remove deletes a file, or a directory with everything under it.
	// ErrNotExist if missing. The root cannot be removed.
	Remove(ctx context.Context, name string) error
	// Rename moves a file or directory, replacing a file at the target and
	// creating missing parent directories of to. ErrNotExist if from is
	// missing; ErrExist if to is a directory; ErrNotDir if a parent of to
	// is a file or from is a directory and to a file. The workspace has
	// already refused the root, from == to, and to inside from.
	// A failed Rename changes nothing.
	Rename(ctx context.Context, from, to string) error
}

// LineRange is a slice of a text file by lines.
type LineRange struct {
	Lines      []string // without their line terminators ("\n" or "\r\n")
	Offset     int      // 0-based index of Lines[0]
	TotalLines int
	EOF        bool // no lines after this range
}

// Immediate is implemented by a driver whose operations never wait on
// anything outside the process: it holds the files in memory (memfs), so
// an operation ends by itself, in time proportional to the data it
// touches. A tool may then run a call on the invoking goroutine
// (kernel.Inliner).
type Immediate interface {
	Immediate() bool
}

// LineReader is implemented by drivers that can read a range of lines
// without materialising the whole file as a string.
type LineReader interface {
	ReadLines(ctx context.Context, name string, offset, limit int) (LineRange, error)
}

// Appender is implemented by drivers that append natively. Semantics as
// WriteFile with ifVersion, except the data is added to the end.
type Appender interface {
	AppendFile(ctx context.Context, name string, data []byte, ifVersion Version) (Version, error)
}

// Putter is implemented by drivers that can store a file without computing
// its version now (memfs hashes it on first use). Semantics as WriteFile
// with no version condition. Workspace.PutFile uses it; loading a large
// tree that way skips hashing files nobody reads.
type Putter interface {
	PutFile(ctx context.Context, name string, data []byte) error
}

// WalkFunc is called for every entry under the walk root, in lexical order,
// directories before their contents. path is root-relative. Returning
// fs.SkipDir from a directory skips it; any other error stops the walk.
type WalkFunc func(path string, e Entry) error

// Walker is implemented by drivers that walk faster than repeated ReadDir.
type Walker interface {
	Walk(ctx context.Context, root string, fn WalkFunc) error
}

// ScanLimiter is implemented by drivers where every file a search looks
// at costs a request (r2: a list per directory, a GET per file read).
// Workspace.WalkRuns, and Workspace.Files through it, hand over at most
// ScanLimit() files (0: no limit) and then stop with a *ScanLimitError;
// grep and glob answer from those files and set metadata.search.truncated
// (REFERENCE §4: S3's maxObjectsScanned).
type ScanLimiter interface {
	ScanLimit() int
}

// ScanLimitError ends a walk cut at its driver's scan limit: the entries
// handed over before it stand, the rest were not listed.
type ScanLimitError struct {
	Limit int
}

func (e *ScanLimitError) Error() string {
	return fmt.Sprintf("the walk stopped at the workspace's scan limit of %d files", e.Limit)
}
