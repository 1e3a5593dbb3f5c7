//go:build codewasm_core

package hostapi

// laterTranscripts are the transcripts of methods and tools a
// codewasm_core build leaves out (the LLM, skills, delegation, host
// tools; toolNames and toolDefinitions list web_fetch).
var laterTranscripts = map[string]bool{
	"addSkill": true, "hostToolInvoke": true, "registerTool": true, "removeSkill": true,
	"runToolCall": true, "send": true, "skillNames": true, "syncState": true, "task": true, "taskResult": true,
	"tasks": true, "toolDefinitions": true, "toolNames": true, "unregisterTool": true,
}
