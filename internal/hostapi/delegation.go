//go:build !codewasm_core

package hostapi

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/a3s-lab/code-wasm/agent"
	"github.com/a3s-lab/code-wasm/core"
	"github.com/a3s-lab/code-wasm/kernel"
)

// CodeNoDelegation: task or tasks on a session created with
// manualDelegationEnabled: false.
const CodeNoDelegation = "NO_DELEGATION"

// delegationMethods are session.task, session.tasks (the task tool as a
// trusted host call, REFERENCE.md §1.2) and taskResult (a background
// task's state).
var delegationMethods = []row{
	method("task", 0, func(c *call, a *TaskSpec) (any, error) { return c.tasks([]TaskSpec{*a}, core.TaskOptions{}) }),
	method("tasks", 0, func(c *call, a *struct {
		Tasks               *[]TaskSpec `json:"tasks" required:"true"`
		AllowPartialFailure bool        `json:"allowPartialFailure"`
		TimeoutMs           int         `json:"timeoutMs"`
		MinSuccessCount     int         `json:"minSuccessCount"`
	}) (any, error) {
		return c.tasks(*a.Tasks, core.TaskOptions{AllowPartialFailure: a.AllowPartialFailure, TimeoutMs: a.TimeoutMs, MinSuccessCount: a.MinSuccessCount})
	}),
	method("taskResult", 0, func(c *call, a *struct {
		TaskID *string `json:"taskId" required:"true"`
		Wait   bool    `json:"wait"`
	}) (any, error) {
		b, ok := c.e.s.BackgroundTask(c.ctx, *a.TaskID, a.Wait)
		if !ok {
			return nil, errf(CodeInvalidCall, "taskResult: no background task %q in this session", *a.TaskID)
		}
		out := map[string]any{"taskId": b.ID, "agent": b.Agent, "done": b.Done}
		if b.Result != nil {
			out["result"] = Wire(b.Result)
		}
		return out, nil
	}),
}

// TaskSpec is one task as JS gives it (camelCase; agent.TaskSpec on the
// tool's wire).
type TaskSpec struct {
	Agent        *string         `json:"agent" required:"true"`
	Description  string          `json:"description"`
	Prompt       *string         `json:"prompt" required:"true"`
	Background   bool            `json:"background"`
	MaxSteps     int             `json:"maxSteps"`
	OutputSchema json.RawMessage `json:"outputSchema"`
}

func (c *call) tasks(ts []TaskSpec, o core.TaskOptions) (any, error) {
	specs := make([]agent.TaskSpec, len(ts))
	for i, t := range ts {
		if t.Agent == nil || t.Prompt == nil {
			return nil, errf(CodeInvalidCall, "%s: tasks[%d] needs agent and prompt (strings)", c.method, i)
		}
		specs[i] = agent.TaskSpec{Agent: *t.Agent, Description: t.Description, Prompt: *t.Prompt, Background: t.Background, MaxSteps: t.MaxSteps, OutputSchema: t.OutputSchema}
	}
	res, err := c.e.s.Tasks(c.ctx, specs, o)
	switch {
	case errors.Is(err, core.ErrNoLLM):
		return nil, errf(CodeNoLLM, "%s: %v", c.method, err)
	case errors.Is(err, core.ErrNoDelegation):
		return nil, errf(CodeNoDelegation, "%s: %v", c.method, err)
	}
	return c.e.result(c.ctx, c.method, res, err)
}

// AgentSpec is one custom agent of options.agents (agent.Def).
type AgentSpec struct {
	Name                    string            `json:"name"`
	Description             string            `json:"description"`
	Prompt                  string            `json:"prompt"`
	MaxSteps                int               `json:"maxSteps"`
	Permissions             *PermissionPolicy `json:"permissions"`
	ConfirmationInheritance string            `json:"confirmationInheritance"`
	Hidden                  bool              `json:"hidden"`
}

// delegationOptions sets the delegation options on opts; the error names
// the key.
func (o *Options) delegationOptions(opts *core.Options) error {
	if o.ManualDelegationEnabled != nil {
		opts.NoDelegation = !*o.ManualDelegationEnabled
	}
	if o.MaxParallelTasks != nil {
		if n := *o.MaxParallelTasks; n < 1 || n > agent.MaxTasks {
			return fmt.Errorf("maxParallelTasks must be between 1 and %d, got %d", agent.MaxTasks, n)
		}
		opts.MaxParallelTasks = *o.MaxParallelTasks
	}
	for i, a := range o.Agents {
		d := agent.Def{Name: a.Name, Description: a.Description, Prompt: a.Prompt, MaxSteps: a.MaxSteps,
			ConfirmationInheritance: a.ConfirmationInheritance, Hidden: a.Hidden}
		if p := a.Permissions; p != nil {
			d.Permissions = kernel.PermissionPolicy{Deny: p.Deny, Allow: p.Allow, Ask: p.Ask, DefaultDecision: kernel.Decision(p.DefaultDecision)}
			if d.Permissions.DefaultDecision == "" {
				d.Permissions.DefaultDecision = kernel.DecisionDeny
			}
			if p.Enabled != nil {
				return fmt.Errorf("agents[%d].permissions.enabled is not used: an agent's policy can only narrow the session's", i)
			}
		}
		opts.Agents = append(opts.Agents, d)
	}
	if o.SkillDirs != nil {
		opts.SkillDirs = *o.SkillDirs
		if opts.SkillDirs == nil {
			opts.SkillDirs = []string{}
		}
	}
	for _, s := range o.Skills {
		opts.Skills = append(opts.Skills, s.skill())
	}
	return nil
}

// skillMethods are addSkill, removeSkill and skillNames (synchronous:
// they touch no workspace and run no tool).
var skillMethods = []row{
	method("addSkill", syncCall, func(c *call, a *SkillSpec) (any, error) {
		if err := c.e.s.AddSkill(a.skill()); err != nil {
			if errors.Is(err, core.ErrClosed) {
				return nil, mapErr(c.method, err)
			}
			return nil, errf(CodeInvalidCall, "addSkill: %v", err)
		}
		return nil, nil
	}),
	method("removeSkill", syncCall, func(c *call, a *struct {
		Name *string `json:"name" required:"true"`
	}) (any, error) {
		return c.e.s.RemoveSkill(*a.Name), nil
	}),
	method("skillNames", syncCall, func(c *call, _ *noArgs) (any, error) { return c.e.s.SkillNames(), nil }),
}

// SkillSpec is a skill as JS gives it (session.addSkill, options.skills).
type SkillSpec struct {
	Name                   *string  `json:"name" required:"true"`
	Description            string   `json:"description"`
	Content                string   `json:"content"`
	AllowedTools           []string `json:"allowedTools"`
	DisableModelInvocation bool     `json:"disableModelInvocation"`
	Kind                   string   `json:"kind"`
	Tags                   []string `json:"tags"`
	Version                string   `json:"version"`
}

func (s SkillSpec) skill() agent.Skill {
	name := ""
	if s.Name != nil {
		name = *s.Name
	}
	return agent.Skill{Name: name, Description: s.Description, Content: s.Content, AllowedTools: s.AllowedTools,
		DisableModelInvocation: s.DisableModelInvocation, Kind: s.Kind, Tags: s.Tags, Version: s.Version}
}
