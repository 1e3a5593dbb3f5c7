package workspace

import (
	"context"
	"fmt"
	"slices"
)

// Seed writes files (path → content) into w in path order, as PutFile
// does: the way to start a workspace from a map, for tests, tools and
// the JS createSession's options.workspace.files. It stops at the first
// file that cannot be written; the error names it by its key, as
// files["key"]: ….
func Seed(ctx context.Context, w *Workspace, files map[string]string) error {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if err := w.PutFile(ctx, n, []byte(files[n])); err != nil {
			return fmt.Errorf("files[%q]: %w", n, err)
		}
	}
	return nil
}
