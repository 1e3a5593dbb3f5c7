//go:build !codewasm_core

package hostapi

import (
	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/tools"
)

// What came after the file tools (issues 13-17): the methods and options
// of the agent loop, exec, MCP, host tools, delegation and skills,
// web_fetch and web_search. A build with the tag codewasm_core swaps this
// file (and the files it names) for later_core.go, which leaves them out,
// so the file-tool half's size can be measured (bench/size.bench.mjs).
var laterMethods = [][]row{llmMethods, execMethods, mcpMethods, hostToolMethods,
	delegationMethods, skillMethods}

// laterOptions sets the session options of the later parts; the error
// names the key, after "options.".
func (o *Options) laterOptions(host Host, opts *core.Options) (err error) {
	opts.McpServers = o.McpServers
	// web_fetch: every host of the package has fetch.
	var allow []string
	if o.WebFetch != nil {
		allow = o.WebFetch.AllowOrigins
	}
	if opts.WebFetch, err = tools.NewWebFetch(allow); err != nil {
		return err
	}
	if opts.WebSearch, err = o.webSearchTool(host); err != nil {
		return err
	}
	if err := o.agentOptions(host, opts); err != nil {
		return err
	}
	return o.delegationOptions(opts)
}
