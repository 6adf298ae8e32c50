// Package doctor holds "mecha doctor": checks of what mecha needs (its
// configuration, the providers' keys, the local server, the MCP servers,
// the sandbox, the session store), each with a one-line fix.
package doctorcmd

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/cli/attach"
	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/engine/sandbox"
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/harness/config"
	"github.com/mecha-agent/mecha/internal/textfmt"
)

// Status is the outcome of one check.
type Status string

// Outcomes: a problem fails the command (exit 1); a warning is reported
// and does not.
const (
	OK      Status = "ok"
	Warning Status = "warn"
	Problem Status = "fail"
)

// Check is one finding.
type Check struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
	// Fix says what to do, on one line ("" when nothing is wrong).
	Fix string `json:"fix,omitempty"`
}

// Report is what doctor found.
type Report struct {
	OK       bool    `json:"ok"`
	Problems int     `json:"problems"`
	Warnings int     `json:"warnings"`
	Checks   []Check `json:"checks"`
}

// Options are the options of "mecha doctor".
type Options struct {
	Env     *cmdkit.Env
	JSON    bool
	Timeout time.Duration
	MCP     harness.MCP
	// Probe tells what the kernel enforces of the sandbox (nil: probe
	// this one; tests give another kernel).
	Probe func() sandbox.Support
}

const defaultTimeout = 3 * time.Second

// NewCmdDoctor builds "mecha doctor".
func NewCmdDoctor(env *cmdkit.Env, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Env: env}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the configuration, keys, servers, sandbox and store, and say what to fix",
		Long: `Check what mecha needs and say, for each problem, how to fix it:

  config     config.toml parses (a file that does not is a problem)
  prices     the date of mecha's built-in price table (Anthropic's and
             OpenAI's list prices, with config.toml's [prices] over them)
  anthropic  ANTHROPIC_API_KEY is set (never shown)
  openai     OPENAI_API_KEY is set (never shown)
  local      the local server (MECHA_LOCAL_URL, default http://127.0.0.1:8080)
             answers GET /v1/models within --timeout
  mcp:NAME   each configured MCP server starts and lists its tools, within
             its startup_timeout_s
  sandbox    what this kernel enforces of the shell's default sandbox
  store      the session directory is a writable directory; how many
             sessions it holds, files passed over, headers that claim
             another id, free disk space

A missing key or an unreachable local server is a warning, unless
default_provider in config.toml names that provider: then the default run
cannot work, and it is a problem. A price table older than 120 days is a
warning while config.toml leaves any of its prices in effect: providers
change their prices. A local server that nothing configures
(no MECHA_LOCAL_URL, no [providers.local], not the default) is not looked
for as one that must answer. A sandbox weaker than asked for, files
passed over in the store and less than 512 MiB free are warnings; an MCP
server that does not start, a store that cannot be written and a config.toml
that does not parse are problems.

Exit status: 0 when there is no problem (warnings allowed), 1 when there is
one, 2 on bad usage.`,
		Example: `  mecha doctor
  mecha doctor --json | jq '.checks[] | select(.status != "ok")'
  mecha doctor --mcp-config .mcp.json
  MECHA_LOCAL_URL=http://127.0.0.1:11434 mecha doctor --timeout 10s`,
		Args: cmdkit.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Timeout <= 0 {
				return cmdkit.Usagef("--timeout must be more than 0")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return doctorRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, `print {"ok","problems","warnings","checks":[{"name","status","detail","fix"}]}`)
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", defaultTimeout, "wait at most `DURATION` for the local server")
	attach.MCPFlags(cmd, &opts.MCP)
	return cmd
}

func doctorRun(ctx context.Context, opts *Options) error {
	r := Run(ctx, opts)
	if opts.JSON {
		if err := cmdkit.WriteJSON(opts.Env.Out, r); err != nil {
			return err
		}
	} else {
		writeText(opts.Env.Out, r)
	}
	if r.Problems > 0 {
		return fmt.Errorf("doctor: %d %s found", r.Problems, textfmt.Plural(r.Problems, "problem", "problems"))
	}
	return nil
}

// Run makes every check.
func Run(ctx context.Context, opts *Options) *Report {
	env := opts.Env
	var checks []Check
	cfg, c := checkConfig(env)
	checks = append(checks, c, checkPrices(env, cfg))
	checks = append(checks, checkKeys(env, cfg)...)
	checks = append(checks, checkLocal(ctx, env, cfg, opts.Timeout))
	checks = append(checks, checkMCP(ctx, env, cfg, opts.MCP)...)
	checks = append(checks, checkSandbox(opts.Probe))
	checks = append(checks, checkStore(env)...)
	r := &Report{Checks: checks}
	for i, c := range checks {
		// Errors quote the URLs they were sent to; no secret of one is shown.
		r.Checks[i].Detail = cmdkit.RedactURLsIn(c.Detail)
		switch c.Status {
		case Problem:
			r.Problems++
		case Warning:
			r.Warnings++
		}
	}
	r.OK = r.Problems == 0
	return r
}

// writeText prints one line per check and, under a check that is not ok,
// its fix; then a summary.
func writeText(w io.Writer, r *Report) {
	width := 0
	for _, c := range r.Checks {
		width = max(width, len(c.Name))
	}
	for _, c := range r.Checks {
		// A detail may quote an MCP server or a configuration file.
		fmt.Fprintf(w, "%-4s  %-*s  %s\n", c.Status, width, textfmt.VisibleLine(c.Name), textfmt.VisibleLine(c.Detail))
		if c.Fix != "" {
			fmt.Fprintf(w, "%-4s  %-*s  fix: %s\n", "", width, "", textfmt.VisibleLine(c.Fix))
		}
	}
	switch {
	case r.Problems == 0 && r.Warnings == 0:
		fmt.Fprintln(w, "all good")
	default:
		var parts []string
		if r.Problems > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", r.Problems, textfmt.Plural(r.Problems, "problem", "problems")))
		}
		if r.Warnings > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", r.Warnings, textfmt.Plural(r.Warnings, "warning", "warnings")))
		}
		fmt.Fprintln(w, strings.Join(parts, ", "))
	}
}

// checkConfig loads config.toml; on failure the other checks go on with
// an empty configuration.
func checkConfig(env *cmdkit.Env) (*config.Config, Check) {
	c := Check{Name: "config", Status: OK}
	cfg, err := env.Config()
	if err != nil {
		c.Status, c.Detail = Problem, err.Error()
		c.Fix = "correct config.toml where the message says (mecha config path names it)"
		return &config.Config{}, c
	}
	if cfg.Path == "" {
		home, _ := env.Home()
		c.Detail = "no config.toml in " + home + ": built-in defaults"
		return cfg, c
	}
	models := 0
	for _, m := range cfg.FilePrices {
		models += len(m)
	}
	c.Detail = fmt.Sprintf("%s parses: default provider %s, %d MCP %s, %d priced %s", cfg.Path, defaultProvider(cfg),
		len(cfg.MCP.Servers), textfmt.Plural(len(cfg.MCP.Servers), "server", "servers"), models, textfmt.Plural(models, "model", "models"))
	return cfg, c
}

// defaultProvider is the provider mecha run uses without -p.
func defaultProvider(cfg *config.Config) string {
	if cfg.DefaultProvider != "" {
		return cfg.DefaultProvider
	}
	return "mock"
}

// severity is a Problem when the default run depends on what failed,
// else a Warning.
func severity(cfg *config.Config, provider string) Status {
	if cfg.DefaultProvider == provider {
		return Problem
	}
	return Warning
}
