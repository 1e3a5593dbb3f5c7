package r2_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"io/fs"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/a3s-lab/code-wasm/workspace/r2"
)

// memBucket is an in-memory store with R2's listing and conditional-put
// semantics, for the driver's native tests (the real binding is tested
// on workerd: npm/test/workerd).
type memBucket struct {
	mu   sync.Mutex
	objs map[string]memObj
}

type memObj struct {
	data []byte
	o    r2.Object
}

func newMemBucket() *memBucket { return &memBucket{objs: map[string]memObj{}} }

func (b *memBucket) Head(ctx context.Context, key string) (r2.Object, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	m, ok := b.objs[key]
	if !ok {
		return r2.Object{}, fs.ErrNotExist
	}
	return m.o, nil
}

func (b *memBucket) Get(ctx context.Context, key string) ([]byte, r2.Object, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	m, ok := b.objs[key]
	if !ok {
		return nil, r2.Object{}, fs.ErrNotExist
	}
	return append([]byte(nil), m.data...), m.o, nil
}

func (b *memBucket) Put(ctx context.Context, key string, data []byte, ifMatch string) (r2.Object, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ifMatch != "" {
		if m, ok := b.objs[key]; !ok || m.o.ETag != ifMatch {
			return r2.Object{}, r2.ErrPrecondition
		}
	}
	sum := md5.Sum(data)
	o := r2.Object{Key: key, Size: int64(len(data)), ETag: hex.EncodeToString(sum[:]), Uploaded: time.Now()}
	b.objs[key] = memObj{append([]byte(nil), data...), o}
	return o, nil
}

func (b *memBucket) List(ctx context.Context, prefix, delimiter, cursor string, limit int) (r2.Page, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	keys := make([]string, 0, len(b.objs))
	for k := range b.objs {
		if strings.HasPrefix(k, prefix) && k > cursor {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var p r2.Page
	seen := map[string]bool{}
	for _, k := range keys {
		if len(p.Objects)+len(p.Prefixes) == limit {
			p.Truncated, p.Cursor = true, k[:0]+p.Cursor
			break
		}
		if delimiter != "" {
			if i := strings.Index(k[len(prefix):], delimiter); i >= 0 {
				d := k[:len(prefix)+i+len(delimiter)]
				if !seen[d] {
					seen[d] = true
					p.Prefixes = append(p.Prefixes, d)
				}
				p.Cursor = d + "\uffff"
				continue
			}
		}
		p.Objects = append(p.Objects, b.objs[k].o)
		p.Cursor = k
	}
	if !p.Truncated {
		p.Cursor = ""
	}
	return p, nil
}

func (b *memBucket) Delete(ctx context.Context, keys ...string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, k := range keys {
		delete(b.objs, k)
	}
	return nil
}
