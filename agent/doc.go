// Package agent is the agent loop behind a session's send, run and stream:
// it asks the model (an llm.Client) for a turn, runs the tool calls the
// model made through the invocation kernel with origin Agent (so policy,
// confirmation, hooks, budget, timeouts and sanitising all apply), feeds
// the results back in call order, and repeats until the model answers
// without calling a tool.
//
// Read-only calls of one turn run concurrently by batch's rule (every call
// read-only, idempotent and cancellation-safe: at most 16 at a time, and
// no more than the smallest max_parallelism); any other turn runs its calls
// one after another in the model's order. A call the loop refuses (an
// unknown tool, arguments that are not a JSON object, an empty or reused
// call id, the duplicate guard) is answered with an error tool result the
// model reads. The run stops after MaxToolRounds tool rounds.
//
// Events (REFERENCE.md §1.3): agent_start, turn_start, text_delta,
// reasoning_delta, tool_start and tool_input_delta while the model streams,
// then the kernel's tool events for each call, turn_end, and one terminal
// event: agent_end, or error. The run's events carry the run id as their
// invocationId; the kernel's events of the model's calls carry it as their
// parentId. Nothing of a run is published after its terminal event.
//
// core wires the loop into the session (Session.Send, Session.Stream);
// `toolsFor` and `runToolCall` (glue.go) serve apps that run their own
// model loop.
package agent
