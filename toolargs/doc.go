// Package toolargs names the argument keys the kernel assumes a tool uses
// when the tool does not say what a call touches (kernel.Toucher): the
// fallback for tools that come from outside (MCP, host tools). Built-in
// tools say it themselves; nothing else reads these names. Path keys are
// also the rule vocabulary of permission rules: `write(path:src/**)` and
// `write(file_path:src/**)` both select the paths a call touches.
package toolargs
