package opfs

import (
	"errors"
	"fmt"
	"strings"
)

// MaxRootBytes is the longest root name.
const MaxRootBytes = 64

// ValidateRoot checks a workspace root name. A root is one name at the
// top of the origin's OPFS: 1 to MaxRootBytes letters, digits, '.', '_'
// or '-', starting with a letter or a digit, and not ending in ".a3s" (the
// suffix of the driver's own files). So no root can lie inside another's
// storage ("victim/log-99.a3s" once could, and, named like a log
// generation of its parent, made the parent unopenable), none is "." or
// "..", and none can be taken for one of the driver's files. Open refuses
// any other name before it touches storage or takes a lock.
func ValidateRoot(root string) error {
	if root == "" {
		return errors.New(`opfs: workspace.root is required: a name for this workspace inside the origin's storage, such as "my-project"`)
	}
	bad := func(why string) error {
		return fmt.Errorf("opfs: workspace.root %q: %s (a root is one name of letters, digits, '.', '_' and '-', starting with a letter or digit, at most %d bytes, such as \"my-project\")", root, why, MaxRootBytes)
	}
	if len(root) > MaxRootBytes {
		return bad(fmt.Sprintf("%d bytes is too long", len(root)))
	}
	if i := strings.IndexAny(root, `/\`); i >= 0 {
		return bad(fmt.Sprintf("%q would put it inside another root's storage", root[i]))
	}
	for i := 0; i < len(root); i++ {
		c := root[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if i == 0 && !alnum {
			return bad("it must start with a letter or digit")
		}
		if !alnum && c != '.' && c != '_' && c != '-' {
			return bad(fmt.Sprintf("%q is not allowed", rune(c)))
		}
	}
	if strings.HasSuffix(strings.ToLower(root), logSuffix) {
		return bad(fmt.Sprintf("names ending in %q are the driver's own files", logSuffix))
	}
	return nil
}

// BlockedError is OpenDir's error when the root's directory holds
// something other than a file under a log file's name (log-<n>.a3s): a
// root nested inside this one by an older version, or another program's
// directory. The driver neither reads nor deletes it (it may hold someone's
// data), so the root cannot open until it is moved away.
type BlockedError struct {
	Root  string // the root's name, when known (Open sets it)
	Entry string // the offending entry
}

func (e *BlockedError) Error() string {
	root := e.Root
	if root == "" {
		root = "this root"
	}
	msg := fmt.Sprintf("opfs: the workspace root %q cannot be opened: its storage holds a directory %q where the driver keeps its log files (a root nested inside it by an older version, such as %q, or another program's directory); nothing was changed. Copy out what you need from that directory and delete it, then open the root again",
		root, e.Entry, root+"/"+e.Entry)
	if e.Root != "" {
		msg += fmt.Sprintf(", e.g. in this origin: (await (await navigator.storage.getDirectory()).getDirectoryHandle(%q)).removeEntry(%q, { recursive: true })", e.Root, e.Entry)
	}
	return msg
}
