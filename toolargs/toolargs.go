package toolargs

// PathKeys are the top-level arguments that name a workspace path.
var PathKeys = []string{"file_path", "path"}

// FilesKey is the array argument whose objects name a path by PathKey.
const (
	FilesKey = "files"
	PathKey  = "path"
)

// CommandKey is the argument that holds a command line; URLKey a URL.
const (
	CommandKey = "command"
	URLKey     = "url"
)

// MainKeys are the arguments a bare rule pattern is matched against when
// the call names no path, first present first.
var MainKeys = []string{CommandKey, "pattern", URLKey, "query"}
