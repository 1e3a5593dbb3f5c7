package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/a3s-lab/code-wasm/agent"
	"github.com/a3s-lab/code-wasm/kernel"
)

// AgentsDir is where a workspace's custom agents live.
const AgentsDir = ".a3s/agents"

// startDelegation registers task and parallel_task when the session has a
// model and delegation is on: the catalog is the built-ins, the
// workspace's .a3s/agents files, then Options.Agents.
func (s *Session) startDelegation(opts Options) error {
	if err := s.startSkills(opts); err != nil {
		return err
	}
	if opts.LLM == nil || opts.NoDelegation {
		return nil
	}
	if opts.MaxParallelTasks < 0 {
		return fmt.Errorf("maxParallelTasks must be >= 1, got %d", opts.MaxParallelTasks)
	}
	defs, warn := agent.LoadAgents(context.Background(), s.ws, AgentsDir)
	s.warnings = append(s.warnings, warn...)
	cat, err := agent.NewCatalog(append(defs, opts.Agents...))
	if err != nil {
		return err
	}
	cfg := s.agents.cfg
	s.delegation = agent.NewDelegation(cfg, cat, opts.MaxParallelTasks)
	for _, t := range s.delegation.Tools() {
		if err := s.reg.RegisterBuiltin(t); err != nil {
			return err
		}
	}
	return nil
}

// Warnings lists what the session skipped while it started: agent and
// skill files that did not parse, duplicate skills.
func (s *Session) Warnings() []string { return append([]string(nil), s.warnings...) }

// TaskOptions are the fan-out options of Tasks.
type TaskOptions struct {
	AllowPartialFailure bool `json:"allow_partial_failure,omitempty"`
	TimeoutMs           int  `json:"timeout_ms,omitempty"`
	MinSuccessCount     int  `json:"min_success_count,omitempty"`
}

// Task runs one delegated task through the task tool as a trusted host
// call (the children's own calls are governed: the session's policy and
// the agent's narrowing apply). The result's metadata is the task's
// (task_id, agent, success, …). ErrNoLLM without a model.
func (s *Session) Task(ctx context.Context, t agent.TaskSpec) (*kernel.Result, error) {
	return s.Tasks(ctx, []agent.TaskSpec{t}, TaskOptions{})
}

// Tasks runs several delegated tasks concurrently through the task tool;
// the result's metadata lists their results in order.
func (s *Session) Tasks(ctx context.Context, ts []agent.TaskSpec, o TaskOptions) (*kernel.Result, error) {
	if s.delegation == nil {
		if !s.HasLLM() {
			return nil, ErrNoLLM
		}
		return nil, ErrNoDelegation
	}
	if ts == nil {
		ts = []agent.TaskSpec{}
	}
	args, err := json.Marshal(agent.FanOut{Tasks: ts, AllowPartialFailure: o.AllowPartialFailure, TimeoutMs: o.TimeoutMs, MinSuccessCount: o.MinSuccessCount})
	if err != nil {
		return nil, err
	}
	return s.Tool(ctx, agent.TaskTool, json.RawMessage(args))
}

// ErrNoDelegation: Task or Tasks on a session created with NoDelegation.
var ErrNoDelegation = errors.New("delegation is off for this session (manualDelegationEnabled: false)")

// BackgroundTask returns a background task's state (wait: until it
// finished or ctx ends); false when the session started no task id.
func (s *Session) BackgroundTask(ctx context.Context, id string, wait bool) (agent.Background, bool) {
	if s.delegation == nil {
		return agent.Background{}, false
	}
	return s.delegation.Background(ctx, id, wait)
}

// startSkills loads the skills of Options.SkillDirs, then Options.Skills;
// search_skills and Skill are listed while at least one is loaded and the
// session has a model, and the system prompt then carries their hint.
func (s *Session) startSkills(opts Options) error {
	s.skills = agent.NewSkills(s.agents.cfg)
	s.agents.hint = s.skills.Hint
	dirs := opts.SkillDirs
	if dirs == nil {
		dirs = []string{agent.DefaultSkillDir}
	}
	loaded, warn := agent.LoadSkills(context.Background(), s.ws, dirs)
	s.warnings = append(s.warnings, warn...)
	for _, sk := range loaded {
		if _, err := s.skills.Add(sk); err != nil {
			return err
		}
	}
	for i, sk := range opts.Skills {
		if _, err := s.skills.Add(sk); err != nil {
			return fmt.Errorf("skills[%d]: %w", i, err)
		}
	}
	return nil
}

// AddSkill adds a skill (or replaces the one of that name); the error
// names what is wrong with it.
func (s *Session) AddSkill(sk agent.Skill) error {
	if s.IsClosed() {
		return ErrClosed
	}
	_, err := s.skills.Add(sk)
	return err
}

// RemoveSkill removes a skill; false when there was none.
func (s *Session) RemoveSkill(name string) bool { return s.skills.Remove(name) }

// SkillNames lists the loaded skills, sorted.
func (s *Session) SkillNames() []string { return s.skills.Names() }
