package r2

import (
	"context"
	"errors"
	"time"
)

// Object is the metadata of one stored object.
type Object struct {
	Key      string    `json:"key"`
	Size     int64     `json:"size"`
	ETag     string    `json:"etag"`
	Uploaded time.Time `json:"uploaded"`
}

// Page is one page of a listing: objects directly under the prefix, the
// common prefixes ending in the delimiter, and a cursor when truncated.
type Page struct {
	Objects   []Object `json:"objects"`
	Prefixes  []string `json:"delimitedPrefixes"`
	Truncated bool     `json:"truncated"`
	Cursor    string   `json:"cursor"`
}

// ErrPrecondition is returned by Put when its ETag condition fails.
var ErrPrecondition = errors.New("r2: precondition failed")

// Bucket is what the driver needs of an object store. Missing objects are
// fs.ErrNotExist.
type Bucket interface {
	Head(ctx context.Context, key string) (Object, error)
	Get(ctx context.Context, key string) ([]byte, Object, error)
	// Put stores data; with ifMatch set, only if the object's ETag is
	// ifMatch (ErrPrecondition otherwise, and for a missing object).
	Put(ctx context.Context, key string, data []byte, ifMatch string) (Object, error)
	// List lists keys under prefix in key order, limit at most per page.
	List(ctx context.Context, prefix, delimiter, cursor string, limit int) (Page, error)
	// Delete removes keys; missing keys are not an error.
	Delete(ctx context.Context, keys ...string) error
}
