package r2

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"time"

	"github.com/a3s-lab/code-wasm/internal/hostcall"
)

// HostBucket is a Bucket over the host dispatcher: each operation is one
// r2.* host kind, answered by the Worker with its R2 binding
// (npm/src/r2host.mjs). Bytes cross as base64 in JSON.
//
//	r2.head   {key}                               → {object | null}
//	r2.get    {key}                               → {object | null, data}
//	r2.put    {key, data, ifMatch}                → {object | null}  (null: the ETag differed)
//	r2.list   {prefix, delimiter, cursor, limit}  → {objects, delimitedPrefixes, truncated, cursor}
//	r2.delete {keys}                              → null
//
// An object is {key, size, etag, uploaded} with uploaded in Unix ms.
type HostBucket struct{ Host hostcall.Func }

type wireObject struct {
	Key      string `json:"key"`
	Size     int64  `json:"size"`
	ETag     string `json:"etag"`
	Uploaded int64  `json:"uploaded"`
}

func (w *wireObject) object() Object {
	return Object{Key: w.Key, Size: w.Size, ETag: w.ETag, Uploaded: time.UnixMilli(w.Uploaded)}
}

func (h HostBucket) call(ctx context.Context, kind string, payload, answer any) error {
	if h.Host == nil {
		return fmt.Errorf("%s: no host to reach the R2 binding", kind)
	}
	p, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	out, err := h.Host(ctx, kind, p)
	if err != nil {
		return fmt.Errorf("%s: %w", kind, err)
	}
	if answer == nil {
		return nil
	}
	if err := json.Unmarshal(out, answer); err != nil {
		return fmt.Errorf("%s: the host's answer: %w", kind, err)
	}
	return nil
}

// Head implements Bucket.
func (h HostBucket) Head(ctx context.Context, key string) (Object, error) {
	var a struct{ Object *wireObject }
	if err := h.call(ctx, "r2.head", map[string]string{"key": key}, &a); err != nil {
		return Object{}, err
	}
	if a.Object == nil {
		return Object{}, fs.ErrNotExist
	}
	return a.Object.object(), nil
}

// Get implements Bucket.
func (h HostBucket) Get(ctx context.Context, key string) ([]byte, Object, error) {
	var a struct {
		Object *wireObject
		Data   []byte
	}
	if err := h.call(ctx, "r2.get", map[string]string{"key": key}, &a); err != nil {
		return nil, Object{}, err
	}
	if a.Object == nil {
		return nil, Object{}, fs.ErrNotExist
	}
	return a.Data, a.Object.object(), nil
}

// Put implements Bucket.
func (h HostBucket) Put(ctx context.Context, key string, data []byte, ifMatch string) (Object, error) {
	var a struct{ Object *wireObject }
	p := struct {
		Key     string `json:"key"`
		Data    []byte `json:"data"`
		IfMatch string `json:"ifMatch,omitempty"`
	}{key, data, ifMatch}
	if p.Data == nil {
		p.Data = []byte{}
	}
	if err := h.call(ctx, "r2.put", p, &a); err != nil {
		return Object{}, err
	}
	if a.Object == nil {
		return Object{}, ErrPrecondition
	}
	return a.Object.object(), nil
}

// List implements Bucket.
func (h HostBucket) List(ctx context.Context, prefix, delimiter, cursor string, limit int) (Page, error) {
	var a struct {
		Objects   []wireObject
		Prefixes  []string `json:"delimitedPrefixes"`
		Truncated bool
		Cursor    string
	}
	p := map[string]any{"prefix": prefix, "delimiter": delimiter, "cursor": cursor, "limit": limit}
	if err := h.call(ctx, "r2.list", p, &a); err != nil {
		return Page{}, err
	}
	pg := Page{Prefixes: a.Prefixes, Truncated: a.Truncated, Cursor: a.Cursor}
	for i := range a.Objects {
		pg.Objects = append(pg.Objects, a.Objects[i].object())
	}
	return pg, nil
}

// Delete implements Bucket.
func (h HostBucket) Delete(ctx context.Context, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	return h.call(ctx, "r2.delete", map[string][]string{"keys": keys}, nil)
}
