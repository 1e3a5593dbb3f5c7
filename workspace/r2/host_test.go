package r2_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/r2"
	"github.com/a3s-lab/code-wasm/workspace/workspacetest"
)

// hostOver answers the r2.* host kinds from a bucket, as npm/src/r2host.mjs
// does from an R2 binding: the wire codec of HostBucket under the whole
// conformance suite.
func hostOver(b r2.Bucket) func(ctx context.Context, kind string, payload []byte) ([]byte, error) {
	wire := func(o r2.Object) map[string]any {
		return map[string]any{"key": o.Key, "size": o.Size, "etag": o.ETag, "uploaded": o.Uploaded.UnixMilli()}
	}
	return func(ctx context.Context, kind string, payload []byte) ([]byte, error) {
		var p struct {
			Key, Prefix, Delimiter, Cursor, IfMatch string
			Limit                                   int
			Data                                    []byte
			Keys                                    []string
		}
		if err := json.Unmarshal(payload, &p); err != nil {
			return nil, err
		}
		var out any
		switch kind {
		case "r2.head", "r2.get":
			data, o, err := b.Get(ctx, p.Key)
			if errors.Is(err, fs.ErrNotExist) {
				out = map[string]any{"object": nil}
				break
			} else if err != nil {
				return nil, err
			}
			out = map[string]any{"object": wire(o), "data": data}
		case "r2.put":
			o, err := b.Put(ctx, p.Key, p.Data, p.IfMatch)
			if errors.Is(err, r2.ErrPrecondition) {
				out = map[string]any{"object": nil}
				break
			} else if err != nil {
				return nil, err
			}
			out = map[string]any{"object": wire(o)}
		case "r2.list":
			pg, err := b.List(ctx, p.Prefix, p.Delimiter, p.Cursor, p.Limit)
			if err != nil {
				return nil, err
			}
			objs := []any{}
			for _, o := range pg.Objects {
				objs = append(objs, wire(o))
			}
			out = map[string]any{"objects": objs, "delimitedPrefixes": pg.Prefixes, "truncated": pg.Truncated, "cursor": pg.Cursor}
		case "r2.delete":
			return []byte("null"), b.Delete(ctx, p.Keys...)
		default:
			return nil, fmt.Errorf("unknown kind %s", kind)
		}
		return json.Marshal(out)
	}
}

// TestConformanceOverTheHostKinds checks each extra after 30 random steps,
// not the suite's 150 (Harness.Steps): every call here is a host round trip
// through the codec, which keeps no state between calls, and
// TestConformance runs the same FS code over the bucket for all 150. The
// test makes 120 thousand host calls, not 1.25 million (under -race, the
// extras were 150 of its 242 s).
func TestConformanceOverTheHostKinds(t *testing.T) {
	buckets := map[workspace.Driver]*memBucket{}
	mk := func(t *testing.T, b *memBucket) workspace.Driver {
		d := open(t, r2.HostBucket{Host: hostOver(b)}, "s1")
		buckets[d] = b
		return d
	}
	workspacetest.RunHarness(t, workspacetest.Harness{
		New:    func(t *testing.T) workspace.Driver { return mk(t, newMemBucket()) },
		Reopen: func(t *testing.T, d workspace.Driver) workspace.Driver { return mk(t, buckets[d]) },
		Steps:  30,
	})
}

func TestHostBucketWithoutHost(t *testing.T) {
	_, err := r2.HostBucket{}.Head(context.Background(), "k")
	if err == nil || err.Error() != "r2.head: no host to reach the R2 binding" {
		t.Fatalf("%v", err)
	}
}
