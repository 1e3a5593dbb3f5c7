package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/a3s-lab/code-wasm/internal/lazyre"
	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/workspace"
)

// Verification (upstream core/src/verification.rs; research §5): each
// command runs through the bash tool and becomes a check; the report's
// status follows upstream's derivation.

// VerificationSchema is the report's schema tag.
const VerificationSchema = "a3s.verification_report.v1"

// VerificationCommand is one check to run.
type VerificationCommand struct {
	ID          string `json:"id"`
	Kind        string `json:"kind"`
	Description string `json:"description"`
	Command     string `json:"command"`
	Required    bool   `json:"required,omitempty"`
	// TimeoutMs bounds the command (bash's default when 0).
	TimeoutMs int64 `json:"timeoutMs,omitempty"`
}

// Check statuses, and report statuses (which add needs_review, skipped).
const (
	CheckPassed      = "passed"
	CheckFailed      = "failed"
	CheckNeedsReview = "needs_review"
	CheckSkipped     = "skipped"
)

// VerificationCheck is one command's outcome.
type VerificationCheck struct {
	ID             string   `json:"id"`
	Kind           string   `json:"kind"`
	Description    string   `json:"description"`
	Status         string   `json:"status"`
	Required       bool     `json:"required"`
	SuggestedTools []string `json:"suggested_tools"`
	EvidenceURIs   []string `json:"evidence_uris,omitempty"`
	ResidualRisk   string   `json:"residual_risk,omitempty"`
}

// VerificationReport is a3s.verification_report.v1.
type VerificationReport struct {
	Schema        string              `json:"schema"`
	Subject       string              `json:"subject"`
	Status        string              `json:"status"`
	Checks        []VerificationCheck `json:"checks"`
	ResidualRisks []string            `json:"residual_risks,omitempty"`
}

// CheckVerificationCommands refuses a list that cannot run: an id missing
// or given twice, a blank command, a negative timeout.
func CheckVerificationCommands(cmds []VerificationCommand) error {
	seen := map[string]bool{}
	for i, c := range cmds {
		switch {
		case strings.TrimSpace(c.ID) == "":
			return fmt.Errorf("commands[%d].id is required", i)
		case seen[c.ID]:
			return fmt.Errorf("commands[%d].id %q is given twice", i, c.ID)
		case strings.TrimSpace(c.Command) == "":
			return fmt.Errorf("commands[%d].command is required", i)
		case c.TimeoutMs < 0:
			return fmt.Errorf("commands[%d].timeoutMs must not be negative", i)
		}
		seen[c.ID] = true
	}
	return nil
}

// Verify runs each command with run (the session's bash call) in order
// and derives the report.
func Verify(ctx context.Context, subject string, cmds []VerificationCommand,
	run func(ctx context.Context, args map[string]any) (*kernel.Result, error)) VerificationReport {
	rep := VerificationReport{Schema: VerificationSchema, Subject: subject, Checks: []VerificationCheck{}}
	for _, c := range cmds {
		ch := VerificationCheck{ID: c.ID, Kind: c.Kind, Description: c.Description, Required: c.Required, SuggestedTools: []string{"bash"}}
		args := map[string]any{"command": c.Command}
		if c.TimeoutMs > 0 {
			args["timeout"] = c.TimeoutMs
		}
		res, err := run(ctx, args)
		switch {
		case err != nil:
			ch.Status, ch.ResidualRisk = CheckFailed, "verification command could not run: "+err.Error()
		default:
			ch.EvidenceURIs = artifactURIs(res.Metadata, nil)
			code, hasCode := intOf(res.Metadata["exit_code"])
			switch {
			case res.ExitCode == 0:
				ch.Status = CheckPassed
			case res.ErrorKind != nil && res.ErrorKind.Type == kernel.ErrTimeout:
				ch.Status = CheckFailed
				ch.ResidualRisk = fmt.Sprintf("verification command timed out after %d ms: %s", res.ErrorKind.DurationMs, c.Command)
			case hasCode && code >= 0:
				ch.Status = CheckFailed
				ch.ResidualRisk = fmt.Sprintf("verification command exited with code %d: %s", code, c.Command)
			default:
				ch.Status = CheckFailed
				ch.ResidualRisk = "verification command could not run: " + firstLine(res.Output)
			}
		}
		if ch.ResidualRisk != "" {
			rep.ResidualRisks = append(rep.ResidualRisks, ch.ResidualRisk)
		}
		rep.Checks = append(rep.Checks, ch)
	}
	rep.Status = reportStatus(rep)
	return rep
}

// reportStatus is upstream's order: any failed check (optional ones too)
// fails the report; a required check needing review or skipped, or any
// residual risk, needs review; no checks is skipped; else passed.
func reportStatus(rep VerificationReport) string {
	for _, c := range rep.Checks {
		if c.Status == CheckFailed {
			return CheckFailed
		}
	}
	for _, c := range rep.Checks {
		if c.Required && (c.Status == CheckNeedsReview || c.Status == CheckSkipped) {
			return CheckNeedsReview
		}
	}
	switch {
	case len(rep.ResidualRisks) > 0:
		return CheckNeedsReview
	case len(rep.Checks) == 0:
		return CheckSkipped
	}
	return CheckPassed
}

// artifactURIs collects every artifact_uri in metadata.
func artifactURIs(v any, out []string) []string {
	switch m := v.(type) {
	case map[string]any:
		for k, x := range m {
			if s, ok := x.(string); ok && k == "artifact_uri" {
				out = append(out, s)
			} else {
				out = artifactURIs(x, out)
			}
		}
	case []any:
		for _, x := range m {
			out = artifactURIs(x, out)
		}
	}
	return out
}

// intOf reads a metadata number, whether kept as Go data or decoded JSON.
func intOf(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case float64:
		return int(n), true
	}
	return 0, false
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// VerificationPresets derives checks from the workspace's root (upstream's
// verification_presets): go.mod → go test (required), go vet; package.json
// scripts test (required), typecheck, lint, run by the package manager its
// packageManager field or lockfile names; Cargo.toml → cargo fmt --check,
// check, test (required), clippy; pyproject.toml → pytest (required), ruff,
// mypy.
func VerificationPresets(ctx context.Context, ws *workspace.Workspace) ([]VerificationCommand, error) {
	out := []VerificationCommand{}
	has := func(p string) (bool, error) {
		_, err := ws.Stat(ctx, p)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return err == nil, err
	}
	if ok, err := has("go.mod"); err != nil {
		return nil, err
	} else if ok {
		out = append(out,
			VerificationCommand{ID: "go-test", Kind: "test", Description: "Run Go tests", Command: "go test ./...", Required: true},
			VerificationCommand{ID: "go-vet", Kind: "lint", Description: "Run go vet", Command: "go vet ./..."})
	}
	if ok, err := has("package.json"); err != nil {
		return nil, err
	} else if ok {
		cmds, err := npmPresets(ctx, ws, has)
		if err != nil {
			return nil, err
		}
		out = append(out, cmds...)
	}
	if ok, err := has("Cargo.toml"); err != nil {
		return nil, err
	} else if ok {
		out = append(out,
			VerificationCommand{ID: "cargo-fmt", Kind: "format", Description: "Check Rust formatting", Command: "cargo fmt --all -- --check", Required: true},
			VerificationCommand{ID: "cargo-check", Kind: "build", Description: "Type-check the Rust crates", Command: "cargo check --all-targets", Required: true},
			VerificationCommand{ID: "cargo-test", Kind: "test", Description: "Run Rust tests", Command: "cargo test", Required: true},
			VerificationCommand{ID: "cargo-clippy", Kind: "lint", Description: "Run clippy", Command: "cargo clippy --all-targets"})
	}
	if ok, err := has("pyproject.toml"); err != nil {
		return nil, err
	} else if ok {
		out = append(out,
			VerificationCommand{ID: "pytest", Kind: "test", Description: "Run Python tests", Command: "python -m pytest", Required: true},
			VerificationCommand{ID: "ruff", Kind: "lint", Description: "Run ruff", Command: "ruff check ."},
			VerificationCommand{ID: "mypy", Kind: "typecheck", Description: "Run mypy", Command: "mypy ."})
	}
	return out, nil
}

var pmName = lazyre.New(`^(npm|pnpm|yarn|bun)(@|$)`)

// npmPresets reads package.json's scripts and picks the package manager.
func npmPresets(ctx context.Context, ws *workspace.Workspace, has func(string) (bool, error)) ([]VerificationCommand, error) {
	b, _, err := ws.ReadFile(ctx, "package.json")
	if err != nil {
		return nil, err
	}
	var pkg struct {
		PackageManager string            `json:"packageManager"`
		Scripts        map[string]string `json:"scripts"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		return nil, fmt.Errorf("package.json is not valid JSON: %w", err)
	}
	pm := ""
	if m := pmName().FindStringSubmatch(pkg.PackageManager); m != nil {
		pm = m[1]
	}
	for _, l := range []struct{ file, pm string }{{"pnpm-lock.yaml", "pnpm"}, {"yarn.lock", "yarn"}, {"bun.lock", "bun"}, {"bun.lockb", "bun"}, {"package-lock.json", "npm"}} {
		if pm != "" {
			break
		}
		ok, err := has(l.file)
		if err != nil {
			return nil, err
		}
		if ok {
			pm = l.pm
		}
	}
	if pm == "" {
		pm = "npm"
	}
	var out []VerificationCommand
	for _, s := range []struct {
		script, kind, desc string
		required           bool
	}{{"test", "test", "Run the test script", true}, {"typecheck", "typecheck", "Run the typecheck script", false}, {"lint", "lint", "Run the lint script", false}} {
		if _, ok := pkg.Scripts[s.script]; ok {
			out = append(out, VerificationCommand{ID: pm + "-" + s.script, Kind: s.kind, Description: s.desc, Command: pm + " run " + s.script, Required: s.required})
		}
	}
	return out, nil
}
