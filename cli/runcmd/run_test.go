package runcmd

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/cli/attach"
	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/engine/provider/mock"
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/harness/config"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
	"github.com/mecha-agent/mecha/testkit/cmdtest"
)

func testEnv(t *testing.T) *cmdkit.Env {
	home := t.TempDir()
	return &cmdkit.Env{Out: io.Discard, Err: io.Discard, Vars: func(k string) string {
		if k == "MECHA_HOME" {
			return home
		}
		return ""
	}}
}

// parse runs "mecha run ARGS" up to the point where the command would
// start, and returns the options it would have run with.
func parse(t *testing.T, args ...string) (*Options, error) {
	t.Helper()
	var got *Options
	cmd := NewCmdRun(testEnv(t), func(_ context.Context, o *Options) error { got = o; return nil })
	err := cmdtest.Execute(cmd, args...)
	return got, err
}

func TestRunFlags(t *testing.T) {
	t.Parallel()
	o, err := parse(t, "-p", "local", "-m", "qwen", "--tool", "fs_read", "--tool", "fs_list", "--max-turns", "7",
		"--temperature", "0", "--seed", "42", "--yes", "--request-timeout", "90s", "the task")
	if err != nil {
		t.Fatal(err)
	}
	if o.Task != "the task" || o.Provider != "local" || o.Model != "qwen" || o.MaxTurns != 7 || !o.Yes ||
		strings.Join(o.Tools, ",") != "fs_read,fs_list" || o.Seed != 42 || o.RequestTimeout != 90*time.Second {
		t.Errorf("parsed %+v", o)
	}
	for _, name := range []string{"temperature", "seed", "max-turns", "provider"} {
		if !o.given(name) {
			t.Errorf("--%s given but not reported as given", name)
		}
	}
	for _, name := range []string{"max-tokens", "effort", "workspace"} {
		if o.given(name) {
			t.Errorf("--%s not given but reported as given", name)
		}
	}
}

func TestRunFlagsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"  "}, "the task is empty"},
		{[]string{"--yes", "--read-only", "x"}, "--yes and --read-only contradict each other"},
		{[]string{"--resume", "last", "--no-session", "x"}, "cannot go with --no-session"},
		{[]string{"--max-turns", "0", "x"}, "--max-turns must be at least 1"},
		{[]string{"--max-tokens", "-1", "x"}, "--max-tokens must be at least 1"},
		{[]string{"--max-cost-usd", "0", "x"}, "--max-cost-usd must be a number more than 0, not 0"},
		{[]string{"--max-cost-usd", "Inf", "x"}, "--max-cost-usd must be a number more than 0, not +Inf"},
		{[]string{"--max-cost-usd", "NaN", "x"}, "--max-cost-usd must be a number more than 0, not NaN"},
		{[]string{"--max-cost-usd", "-1", "x"}, "--max-cost-usd must be a number more than 0, not -1"},
		{[]string{"--temperature", "NaN", "x"}, "--temperature must be a number of 0 or more, not NaN"},
		{[]string{"--temperature", "Inf", "x"}, "--temperature must be a number of 0 or more, not +Inf"},
		{[]string{"--temperature", "-0.5", "x"}, "--temperature must be a number of 0 or more, not -0.5"},
		{[]string{"--resume", "", "x"}, "--resume needs a session id (or last)"},
		{[]string{"--resume=", "x"}, "--resume needs a session id (or last)"},
		{[]string{"--compact-keep-recent", "0", "x"}, "--compact-keep-recent must be at least 1"},
		{[]string{"--effort", "extreme", "x"}, `--effort must be low, medium or high, not "extreme"`},
		{[]string{}, "no task: give it as an argument"},
		{[]string{"a", "b"}, "at most one task"},
		{[]string{"--json", "--stream-json", "x"}, "--json and --stream-json contradict each other"},
		{[]string{"-c", "--resume", "last", "x"}, "--continue and --resume both name the session"},
		{[]string{"--continue", "--no-session", "x"}, "cannot go with --no-session"},
		{[]string{"-f", "task.md", "x"}, "as an argument or with -f, not both"},
	} {
		_, err := parse(t, tc.args...)
		var ue *cmdkit.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run %q: err %v, want a usage error containing %q", tc.args, err, tc.want)
		}
	}
	// Flag values the flag itself refuses (the root command makes them
	// usage errors).
	for _, tc := range []struct{ value, want string }{
		{"0s", "must be positive"},
		{"-5m", "must be positive"},
		{"soon", "not a duration"},
	} {
		o, err := parse(t, "--request-timeout", tc.value, "x")
		if o != nil || err == nil || !strings.Contains(err.Error(), `"--request-timeout" flag: `+tc.want) {
			t.Errorf("--request-timeout %s: ran=%v err %v, want %q", tc.value, o != nil, err, tc.want)
		}
	}
}

// recorded is a session whose last attach ran under cfg.
func recorded(cfg transcript.Config) *session.Session {
	return &session.Session{
		Meta:    transcript.Meta{ID: "20260101T000000-00000000", Provider: "meta-prov", Model: "meta-model", Workspace: cfg.Workspace},
		Records: []transcript.Record{&cfg},
	}
}

func ptr[T any](v T) *T { return &v }

// lastAttach is a config that sets every field away from its default.
func lastAttach(ws string) transcript.Config {
	return transcript.Config{
		Provider: "local", Model: "qwen", Workspace: ws, SystemPrompt: ptr("recorded prompt"), Tools: []string{"fs_read"},
		Effort: ptr("high"), Temperature: ptr(0.5), Seed: ptr(uint64(9)), Thinking: true, CachePrompt: false,
		MaxTokens: 100, MaxTurns: 5, MaxOutputTokens: ptr(uint64(1000)), MaxCostUSD: ptr(2.0),
		CompactAtTokens: ptr(uint64(5000)), CompactKeepRecent: 3, PermissionMode: "yes",
	}
}

// TestResumeInheritance checks what a resumed run takes from the session's
// last config and what the command line overrides.
// inheritCase is one resume-inheritance case: flags given beside
// --resume, and what the resolved config must then hold.
type inheritCase struct {
	name  string
	args  []string
	check func(t *testing.T, rc transcript.Config)
}

func TestResumeInheritance(t *testing.T) {
	t.Parallel()
	ws, other := t.TempDir(), t.TempDir()
	// AGENTS.md written since the session was recorded: a resume keeps
	// the recorded prompt unless a flag that shapes it is given.
	if err := os.WriteFile(filepath.Join(ws, "AGENTS.md"), []byte("Use tabs."), 0o600); err != nil {
		t.Fatal(err)
	}
	last := lastAttach(ws)
	prompt := *last.SystemPrompt
	for _, tc := range append(promptCases(ws, other, prompt), budgetCases()...) {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parse(t, append(tc.args, "--resume", "x", "go on")...)
			if err != nil {
				t.Fatal(err)
			}
			// The workspace is trusted: these cases are about inheritance.
			rc, err := buildRunConfig(o, &config.Config{TrustedWorkspaces: []string{ws, other}}, recorded(last))
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, rc)
		})
	}
	// Untrusted now, the prompt re-resolved leaves AGENTS.md out, and the
	// config says why.
	o, err := parse(t, "--no-project-instructions=false", "--resume", "x", "go on")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := buildRunConfig(o, &config.Config{}, recorded(last))
	if err != nil {
		t.Fatal(err)
	}
	if p := *rc.SystemPrompt; strings.Contains(p, "Use tabs.") || rc.WorkspaceTrust == nil || rc.WorkspaceTrust.Trusted {
		t.Errorf("untrusted: prompt %q, trust %+v", p, rc.WorkspaceTrust)
	}
}

// promptCases: what is inherited, the provider and model, the prompt.
func promptCases(ws, other, prompt string) []inheritCase {
	return []inheritCase{
		{"nothing given: everything inherited but permission", nil, func(t *testing.T, rc transcript.Config) {
			if rc.Provider != "local" || rc.Model != "qwen" || rc.Workspace != ws || *rc.SystemPrompt != prompt ||
				strings.Join(rc.Tools, ",") != "fs_read" || *rc.Effort != "high" || *rc.Temperature != 0.5 || *rc.Seed != 9 ||
				!rc.Thinking || rc.CachePrompt || rc.MaxTokens != 100 || rc.MaxTurns != 5 || *rc.MaxOutputTokens != 1000 ||
				*rc.MaxCostUSD != 2 || *rc.CompactAtTokens != 5000 || rc.CompactKeepRecent != 3 {
				t.Errorf("inherited %+v", rc)
			}
			if rc.PermissionMode != "ask" {
				t.Errorf("permission %q inherited; a resume runs under the scrutiny asked for now", rc.PermissionMode)
			}
		}},
		{"another provider drops the recorded model", []string{"-p", "mock"}, func(t *testing.T, rc transcript.Config) {
			if rc.Provider != "mock" || rc.Model != mock.DefaultModel {
				t.Errorf("provider/model %s/%s", rc.Provider, rc.Model)
			}
		}},
		{"the same provider keeps it", []string{"-p", "local"}, func(t *testing.T, rc transcript.Config) {
			if rc.Model != "qwen" {
				t.Errorf("model %q", rc.Model)
			}
		}},
		{"-m overrides", []string{"-m", "llama"}, func(t *testing.T, rc transcript.Config) {
			if rc.Provider != "local" || rc.Model != "llama" {
				t.Errorf("provider/model %s/%s", rc.Provider, rc.Model)
			}
		}},
		{"-w re-resolves the system prompt", []string{"-w", other}, func(t *testing.T, rc transcript.Config) {
			if rc.Workspace != other || *rc.SystemPrompt == prompt || !strings.Contains(*rc.SystemPrompt, other) {
				t.Errorf("workspace %s, prompt %q", rc.Workspace, *rc.SystemPrompt)
			}
		}},
		{"--no-project-instructions re-resolves the prompt, without them", []string{"--no-project-instructions"}, func(t *testing.T, rc transcript.Config) {
			if p := *rc.SystemPrompt; p == prompt || !strings.Contains(p, ws) || strings.Contains(p, "Use tabs.") {
				t.Errorf("prompt %q", p)
			}
		}},
		{"--no-project-instructions=false re-resolves it, with them", []string{"--no-project-instructions=false"}, func(t *testing.T, rc transcript.Config) {
			if p := *rc.SystemPrompt; !strings.Contains(p, "from AGENTS.md at the root of the workspace:\nUse tabs.") {
				t.Errorf("prompt %q", p)
			}
		}},
	}
}

// budgetCases: budgets, sampling, the tool surface, the permission mode.
func budgetCases() []inheritCase {
	return []inheritCase{
		{"given budgets override", []string{"--max-turns", "9", "--max-tokens", "50", "--compact-keep-recent", "2"}, func(t *testing.T, rc transcript.Config) {
			if rc.MaxTurns != 9 || rc.MaxTokens != 50 || rc.CompactKeepRecent != 2 || *rc.MaxOutputTokens != 1000 {
				t.Errorf("budgets %+v", rc)
			}
		}},
		{"--effort '' clears the effort", []string{"--effort", ""}, func(t *testing.T, rc transcript.Config) {
			if rc.Effort != nil {
				t.Errorf("effort %q", *rc.Effort)
			}
		}},
		{"--no-cache-prompt=false turns caching back on", []string{"--no-cache-prompt=false", "--thinking=false"}, func(t *testing.T, rc transcript.Config) {
			if !rc.CachePrompt || rc.Thinking {
				t.Errorf("cache %v thinking %v", rc.CachePrompt, rc.Thinking)
			}
		}},
		{"--tool replaces the surface", []string{"--tool", "fs_list"}, func(t *testing.T, rc transcript.Config) {
			if strings.Join(rc.Tools, ",") != "fs_list" {
				t.Errorf("tools %v", rc.Tools)
			}
		}},
		{"--read-only is this attach's mode", []string{"--read-only"}, func(t *testing.T, rc transcript.Config) {
			if rc.PermissionMode != "read-only" {
				t.Errorf("permission %q", rc.PermissionMode)
			}
		}},
	}
}

func TestNewRunConfigDefaults(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	o, err := parse(t, "-w", ws, "task")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := buildRunConfig(o, &config.Config{DefaultProvider: "local"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rc.Provider != "local" {
		t.Errorf("config.toml's default_provider not used: %q", rc.Provider)
	}
	if rc.MaxTurns != harness.DefaultMaxTurns || rc.MaxTokens != harness.DefaultMaxTokens || rc.CompactKeepRecent != harness.DefaultCompactKeepRecent ||
		!rc.CachePrompt || rc.Temperature != nil || rc.Seed != nil || rc.PermissionMode != "ask" || rc.Workspace != ws {
		t.Errorf("defaults %+v", rc)
	}
	o, _ = parse(t, "-w", ws, "-p", "mock", "task")
	if rc, _ := buildRunConfig(o, &config.Config{DefaultProvider: "local"}, nil); rc.Provider != "mock" {
		t.Errorf("-p should beat default_provider: %q", rc.Provider)
	}
}

func TestResumeOfAGoneWorkspace(t *testing.T) {
	t.Parallel()
	o, _ := parse(t, "--resume", "x", "go on")
	gone := filepath.Join(t.TempDir(), "gone")
	_, err := buildRunConfig(o, &config.Config{}, recorded(transcript.Config{Provider: "mock", Workspace: gone}))
	if err == nil || !strings.Contains(err.Error(), "give another with -w") {
		t.Errorf("err %v", err)
	}
}

// TestRefusedRunsLeaveNoSession runs "mecha run" for real on runs refused
// before their first request: none may leave a session behind, and none
// may add an attach to the session it resumes.
func TestRefusedRunsLeaveNoSession(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	home, _ := env.Home()
	store, _ := env.Store()
	dir := store.Dir
	ws := t.TempDir()
	exec := func(args ...string) error {
		cmdEnv := env
		if args[0] == "-p" && args[1] == "openai" {
			// A key, and a server nothing listens on: the run must stop
			// before its first request.
			vars := map[string]string{"MECHA_HOME": home, "OPENAI_API_KEY": "sk-test-0123456789", "OPENAI_BASE_URL": "http://127.0.0.1:1"}
			cmdEnv = &cmdkit.Env{Out: io.Discard, Err: io.Discard, Vars: func(k string) string { return vars[k] }}
		}
		return cmdtest.Execute(NewCmdRun(cmdEnv, nil), append([]string{"-w", ws}, args...)...)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"a cost budget with no price", []string{"-p", "openai", "-m", "gpt-not-in-the-table", "--max-cost-usd", "1", "x"}},
		{"a provider with no key", []string{"-p", "anthropic", "x"}},
		{"an unknown provider", []string{"-p", "nosuch", "x"}},
		{"a mock script that is not there", []string{"--mock-script", filepath.Join(ws, "missing.json"), "x"}},
		{"an unknown tool", []string{"--tool", "nope", "x"}},
		{"a system prompt file that is not there", []string{"--system-prompt-file", filepath.Join(ws, "missing.txt"), "x"}},
		{"a NaN temperature", []string{"--temperature", "NaN", "x"}},
		{"an infinite cost budget", []string{"--max-cost-usd", "Inf", "x"}},
	} {
		if err := exec(tc.args...); err == nil {
			t.Errorf("%s: ran", tc.name)
		}
		if ents, err := os.ReadDir(dir); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s: left %v in the session directory (%v)", tc.name, ents, err)
		}
	}
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("default_provider = \"bogus\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := exec("x"); err == nil || !strings.Contains(err.Error(), "config.toml: default_provider") {
		t.Errorf("default_provider bogus: %v", err)
	}
	if ents, err := os.ReadDir(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("default_provider bogus: left %v (%v)", ents, err)
	}
	os.Remove(filepath.Join(home, "config.toml"))

	// A resumed session refused before its first request is left as it was.
	if err := exec("list"); err != nil {
		t.Fatal(err)
	}
	ents, err := filepath.Glob(filepath.Join(dir, "*.jsonl")) // the index (.index/) is a cache beside them
	if err != nil || len(ents) != 1 {
		t.Fatalf("after one run: %v, %v", ents, err)
	}
	path := ents[0]
	before, _ := os.ReadFile(path)
	for _, args := range [][]string{{"-p", "openai", "-m", "gpt-not-in-the-table", "--max-cost-usd", "1"}, {"-p", "anthropic"}, {"--tool", "nope"}} {
		if err := exec(append(args, "--resume", "last", "go on")...); err == nil {
			t.Errorf("resume %q: ran", args)
		}
		after, _ := os.ReadFile(path)
		if !bytes.Equal(before, after) {
			t.Errorf("resume %q refused but the session changed:\n%s", args, after[len(before):])
		}
	}
	if ents, _ := filepath.Glob(filepath.Join(dir, "*.jsonl")); len(ents) != 1 {
		t.Errorf("sessions after the refused resumes: %v", ents)
	}
}

// buildRunConfig resolves o's attach as a run does, through the harness.
func buildRunConfig(o *Options, cfg *config.Config, prev *session.Session) (transcript.Config, error) {
	o.Settings.Given = o.Given
	return harness.Resolve(attach.World(o.Env), &o.Settings, cfg, prev)
}
