package harness

import (
	"fmt"
	"math"
	"time"

	"github.com/mecha-agent/mecha/engine/sandbox"
	"github.com/mecha-agent/mecha/engine/tool"
)

// Settings are what shapes an attach, as the flags of run and chat give
// them (cli/attach declares those flags once). A resumed session inherits
// every setting not Given, except the permission mode and the trifecta
// policy, which are always the ones asked for now.
type Settings struct {
	// Given reports whether a setting was given (by its flag's name), to
	// tell a value given from its default; nil: none was.
	Given func(name string) bool

	Provider, Model string
	Workspace       string
	MockScript      string
	// Tools restricts the surface (mcp__SERVER for a server's tools, agent
	// for subagents); nil: every tool.
	Tools []string
	MCP   MCP

	NoLearnedRules        bool
	NoProjectInstructions bool
	SystemPromptFile      string

	Yes, ReadOnly bool
	Trifecta      string

	MaxTurns          int
	MaxTokens         int
	MaxOutputTokens   uint64
	MaxCostUSD        float64
	CompactAtTokens   uint64
	CompactKeepRecent int
	Effort            string
	Thinking          bool
	NoCachePrompt     bool
	Temperature       float64
	Seed              uint64

	Sandbox Sandbox
	// TrustAsked says the chat put its question about the workspace
	// before this attach (recorded as workspace_trust's "by": question);
	// the answer is config.toml's trusted_workspaces, written or not.
	TrustAsked bool
	// RequestTimeout bounds the provider's silences (0: config.toml's);
	// it shapes no request, so the config record does not keep it.
	RequestTimeout time.Duration
}

// Defaults of an attach.
const (
	DefaultMaxTurns          = 50
	DefaultMaxTokens         = 8192
	DefaultCompactKeepRecent = 6
)

// DefaultSettings are the settings of an attach no flag shaped.
func DefaultSettings() Settings {
	return Settings{Provider: "mock", MaxTurns: DefaultMaxTurns, MaxTokens: DefaultMaxTokens,
		CompactKeepRecent: DefaultCompactKeepRecent, Trifecta: string(tool.TrifectaRefuse), Sandbox: Sandbox{Mode: sandbox.ModeLandlock}}
}

// MCP are the MCP servers an attach starts: config.toml's and those of
// the .mcp.json Files; none when Off.
type MCP struct {
	Files []string
	Off   bool
}

// Sandbox is what confines the shell: a mode (landlock or none) and
// whether the network stays on.
type Sandbox struct {
	Mode    string
	Network bool
	// AllowDomains are the hosts the shell may reach through the egress
	// proxy (--allow-domain), its network otherwise cut.
	AllowDomains []string
}

// Validate refuses a mode that does not exist, and an allowlist the
// setting cannot have.
func (s Sandbox) Validate() error {
	if _, err := sandbox.ParseMode(s.Mode); err != nil {
		return usagef("--sandbox must be %s or %s, not %q", sandbox.ModeLandlock, sandbox.ModeNone, s.Mode)
	}
	if len(s.AllowDomains) > 0 {
		switch {
		case s.Mode == sandbox.ModeNone:
			return usagef("--allow-domain needs the sandbox (--sandbox %s): an unconfined shell reaches every host", sandbox.ModeLandlock)
		case s.Network:
			return usagef("--allow-domain and --sandbox-network: choose one (the network open to every host, or only to those)")
		}
		for _, d := range s.AllowDomains {
			if err := sandbox.CheckDomain(d); err != nil {
				return usagef("--allow-domain: %v", err)
			}
		}
	}
	return nil
}

func (s *Settings) given(name string) bool { return s.Given != nil && s.Given(name) }

// set reports whether a setting applies: always on a new session, and on
// a resumed one only when given.
func (s *Settings) set(resumed bool, name string) bool { return !resumed || s.given(name) }

// UsageError is a setting that cannot be: the CLI maps it to exit 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usagef(format string, args ...any) error { return &UsageError{fmt.Errorf(format, args...)} }

// Validate checks the settings before anything is opened or created.
func (s *Settings) Validate() error {
	switch {
	case s.MaxTurns < 1:
		return usagef("--max-turns must be at least 1")
	case s.MaxTokens < 1:
		return usagef("--max-tokens must be at least 1")
	case s.given("max-cost-usd") && !(s.MaxCostUSD > 0 && !math.IsInf(s.MaxCostUSD, 1)):
		return usagef("--max-cost-usd must be a number more than 0, not %v", s.MaxCostUSD)
	case s.given("temperature") && !(s.Temperature >= 0 && !math.IsInf(s.Temperature, 1)):
		return usagef("--temperature must be a number of 0 or more, not %v", s.Temperature)
	case s.CompactKeepRecent < 1:
		return usagef("--compact-keep-recent must be at least 1")
	}
	switch s.Effort {
	case "", "low", "medium", "high":
	default:
		return usagef("--effort must be low, medium or high, not %q", s.Effort)
	}
	if err := s.Sandbox.Validate(); err != nil {
		return err
	}
	if _, err := tool.ParseTrifecta(s.Trifecta); err != nil || s.Trifecta == "" {
		return usagef("--trifecta must be refuse, ask or off, not %q", s.Trifecta)
	}
	_, err := PermissionMode(s.Yes, s.ReadOnly)
	return err
}
