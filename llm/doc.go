// Package llm talks to language models: the request and the normalized
// stream every provider is turned into, and the clients of the two wire
// protocols, OpenAI-compatible chat completions and Anthropic messages,
// written by hand over the one HTTP seam internal/fetch (fetch through
// syscall/js under js/wasm, net/http natively; the official SDKs would add
// megabytes to the wasm). A host-supplied client is any Client.
//
// It is not the agent loop (agent/) nor structured output
// (generate_object): both consume a Client.
//
// # The chunk's JSON shape
//
// A host-supplied JavaScript client (`{ stream(request, { signal }) }`)
// receives the Request as JSON (the json tags of Request: messages as
// {role, text?, toolCalls?: [{id, name, arguments}], toolResults?: [{callId,
// content, isError?}]}, tools as {name, description?, parameters},
// toolChoice as {type: "auto"|"none"|"required"|"tool", name?}) and yields
// chunks of this shape, the json tags of Chunk:
//
//	{"type":"text_delta","text":"Hel"}
//	{"type":"reasoning_delta","text":"The user wants"}
//	{"type":"tool_call_start","index":0,"id":"call_1","name":"read"}
//	{"type":"tool_call_delta","index":0,"fragment":"{\"file_path\":"}
//	{"type":"tool_call_end","index":0}
//	{"type":"finish","stopReason":"tool_use","usage":{"promptTokens":12,"completionTokens":7,"totalTokens":19}}
//
// index numbers the turn's tool calls from 0 (absent means 0), in the
// order they start; a call's fragments concatenate to its arguments' JSON
// text. stopReason is one of "stop", "tool_use", "max_tokens",
// "content_filter", "other"; usage may be omitted (zero). The order is
// checked (Turn.Add): a delta or end of a call that did not start, or a
// stream that ends without "finish", is a transport error.
package llm
