package core

import (
	"errors"
	"fmt"

	"github.com/a3s-lab/code-wasm/workspace"
)

// directoryDriver is a workspace driver the session closes.
type directoryDriver interface {
	workspace.Driver
	Close() error
}

// newDirectory is New for Options.Directory: the session owns the
// driver it opens and closes it with itself.
func newDirectory(opts Options) (*Session, error) {
	if opts.Workspace != nil {
		return nil, errors.New("core: set Options.Workspace or Options.Directory, not both")
	}
	d, err := openDirectory(opts.Directory, opts.Exec)
	if err != nil {
		return nil, fmt.Errorf("core: Options.Directory: %w", err)
	}
	ws, err := workspace.New(d)
	if err == nil {
		opts.Workspace, opts.Directory = ws, ""
		var s *Session
		if s, err = New(opts); err == nil {
			s.opened = d
			return s, nil
		}
	}
	d.Close()
	return nil, err
}
