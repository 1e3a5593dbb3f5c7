package errkind

import "errors"

// Kind is the `type` tag of a serialised error kind.
type Kind string

// The kinds of REFERENCE.md §3.6.
const (
	VersionConflict   Kind = "version_conflict"
	RemoteGitConflict Kind = "remote_git_conflict"
	NotFound          Kind = "not_found"
	InvalidArgument   Kind = "invalid_argument"
	HookDenied        Kind = "hook_denied"
	Unsupported       Kind = "unsupported"
	Timeout           Kind = "timeout"
	Transport         Kind = "transport"
	Cancelled         Kind = "cancelled"
	PartialFailure    Kind = "partial_failure"
	RateLimited       Kind = "rate_limited"
)

// Error is implemented by an error that reports its own kind.
type Error interface {
	error
	Kind() Kind
}

// Conflict is implemented by a version-conflict error that knows the path
// and both versions.
type Conflict interface {
	Error
	Conflict() (path, expected, actual string)
}

// Pathed is implemented by an error that names the path it failed on (the
// path a not_found or version_conflict kind reports).
type Pathed interface {
	error
	ErrorPath() string
}

// New returns an error with text msg that reports kind k, for sentinels
// (compare with errors.Is, classify with Is).
func New(k Kind, msg string) error { return &sentinel{k, msg} }

type sentinel struct {
	kind Kind
	msg  string
}

func (e *sentinel) Error() string { return e.msg }
func (e *sentinel) Kind() Kind    { return e.kind }

// Is reports whether any error in err's tree (as errors.Is walks it)
// reports kind k.
func Is(err error, k Kind) bool {
	for err != nil {
		if e, ok := err.(Error); ok && e.Kind() == k {
			return true
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if Is(e, k) {
					return true
				}
			}
			return false
		default:
			return false
		}
	}
	return false
}

// Path is the path the first Pathed error in err's tree names.
func Path(err error) (string, bool) {
	var p Pathed
	if errors.As(err, &p) {
		return p.ErrorPath(), true
	}
	return "", false
}
