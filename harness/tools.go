package harness

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mecha-agent/mecha/internal/credential"

	"github.com/mecha-agent/mecha/engine/subagent"

	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/engine/tool/builtin"
	"github.com/mecha-agent/mecha/harness/config"
	"github.com/mecha-agent/mecha/mcp/mcpclient"
	"github.com/mecha-agent/mecha/record/transcript"
)

// PermissionMode is the mode --yes and --read-only ask for; "" when
// neither is given (ask, or whatever was recorded).
func PermissionMode(yes, readOnly bool) (tool.Mode, error) {
	switch {
	case yes && readOnly:
		return "", usagef("--yes and --read-only contradict each other")
	case yes:
		return tool.ModeYes, nil
	case readOnly:
		return tool.ModeReadOnly, nil
	}
	return "", nil
}

// ToolSetup is what building the tool surface needs besides the config.
type ToolSetup struct {
	// Only restricts the surface to these names, in registry order; empty
	// means rc.Tools when it is set (a recorded empty list: no tool at all),
	// else every tool. mcp__<server>
	// stands for all of that server's tools.
	Only []string
	// MCP are the tools of the connected MCP servers, offered after the
	// built-ins.
	MCP []*mcpclient.Tool
	// Subagent is how the "agent" tool runs a child (see package
	// subagent). The tool is offered, after every other, when the names
	// the surface is restricted to include "agent", or when none are
	// given and Subagents is set (config.toml's subagents = true). Nil:
	// never offered, and a surface that names it is refused.
	Subagent *subagent.Setup
	// Subagents offers "agent" beside every tool when no names are given.
	Subagents bool
	// Asker, when set, is who the gate and the interlock ask (the
	// interactive mode's inline prompt); nil asks on the terminal when In
	// is one, else nobody.
	Asker tool.Asker
	// Rules are the saved permission rules; nil reads them for the
	// workspace (PermissionRules), so every surface holds them.
	Rules *tool.Rules
	// Config is config.toml as the caller read it; nil reads it
	// (LoadConfig), so every door builds its tools by the same settings
	// ([web_fetch] refuse_private).
	Config *config.Config
}

// Workspaces opens each workspace directory once, however many tool
// surfaces are built on it (a replay builds one per turn), and closes them
// all when the command is done. The zero value is ready to use.
type Workspaces struct {
	open map[string]builtin.Workspace
	// sandboxNoted is whether the sandbox's note was written: once a
	// command, however many surfaces it builds.
	sandboxNoted bool
	// homeNoted is whether the note that the workspace holds mecha's
	// home was written (once, like sandboxNoted).
	homeNoted bool
}

// Open returns the workspace rooted at dir, opening it the first time.
func (w *Workspaces) Open(dir string) (builtin.Workspace, error) {
	if ws, ok := w.open[dir]; ok {
		return ws, nil
	}
	ws, err := builtin.NewWorkspace(dir)
	if err != nil {
		return ws, err
	}
	if w.open == nil {
		w.open = map[string]builtin.Workspace{}
	}
	w.open[dir] = ws
	return ws, nil
}

// Close closes every workspace opened.
func (w *Workspaces) Close() error {
	var errs []error
	for dir, ws := range w.open {
		errs = append(errs, ws.Close())
		delete(w.open, dir)
	}
	return errors.Join(errs...)
}

// BuildTools builds the tools of a run: the built-ins confined to the
// workspace (the shell by the sandbox rc records, as far as this kernel
// enforces it: one note on Err when it enforces less), their results
// cleared of secret values (Secrets), each tracked for taint, gated by the
// permission mode, and held by the trifecta interlock (rc.Trifecta; "" is
// refuse), as tool.Policy assembles them: a call the interlock refuses is
// neither asked about nor counted, a call the gate denies is not counted,
// and a call both would ask about is asked about once. The "agent" tool, when offered
// (ToolSetup.Subagent), is decorated the same way; its children's tools
// are the same tools decorated for a child's own tracker.
func BuildTools(w *World, wss *Workspaces, rc transcript.Config, setup ToolSetup) (*tool.Registry, *tool.Tracker, error) {
	d, base, err := baseTools(w, wss, rc, setup)
	if err != nil {
		return nil, nil, err
	}
	tracker := &tool.Tracker{}
	// The hosts the shell's egress allowlist names are the user's choice
	// as much as trusted_hosts: a destination among them is not one an
	// attacker picked.
	tracker.TrustHosts(rc.TrustedHosts...)
	tracker.TrustHosts(rc.SandboxAllowDomains...)
	only := setup.Only
	if len(only) == 0 {
		only = rc.Tools
	}
	// A recorded empty list (not a missing one) offered no tool at all: a
	// reflection or a distillation, replayed.
	if only != nil && len(only) == 0 {
		return &tool.Registry{}, tracker, nil
	}
	wantAgent := slices.Contains(only, subagent.Name) || len(only) == 0 && setup.Subagents
	only = slices.DeleteFunc(slices.Clone(only), func(n string) bool { return n == subagent.Name })
	surface := func(tr *tool.Tracker) (*tool.Registry, error) { return d.registry(base, tr, only, setup.MCP) }
	reg, err := surface(tracker)
	if err != nil {
		return nil, nil, err
	}
	if !wantAgent {
		return reg, tracker, nil
	}
	if setup.Subagent == nil {
		return nil, nil, usagef("the %s tool cannot be offered here", subagent.Name)
	}
	others, _ := reg.Restrict(reg.Names()) // a copy: the tools a child can be given
	at := subagent.New(*setup.Subagent, rc, others, tracker, surface)
	if err := reg.Register(d.decorate(at, tracker)); err != nil {
		return nil, nil, err
	}
	return reg, tracker, nil
}

// decoration is how each tool of a surface is wrapped.
type decoration struct {
	secrets []tool.Secret
	mode    tool.Mode
	policy  tool.Trifecta
	asker   tool.Asker
	rules   *tool.Rules
}

func (d decoration) decorate(t tool.Tool, tr *tool.Tracker) tool.Tool {
	return tool.Policy{Mode: d.mode, Trifecta: d.policy, Asker: d.asker, Secrets: d.secrets, Rules: d.rules}.Wrap(t, tr)
}

// registry decorates base for tr and restricts it to only (nil: all).
func (d decoration) registry(base []tool.Tool, tr *tool.Tracker, only []string, mcpTools []*mcpclient.Tool) (*tool.Registry, error) {
	reg := &tool.Registry{}
	for _, t := range base {
		if err := reg.Register(d.decorate(t, tr)); err != nil {
			return nil, err
		}
	}
	if only == nil {
		return reg, nil
	}
	reg, err := reg.Restrict(mcpclient.ExpandNames(only, mcpTools))
	if err != nil {
		return nil, &UsageError{err}
	}
	return reg, nil
}

// baseTools are the undecorated tools of a surface (the built-ins, then
// the MCP tools) and the decoration rc asks for.
func baseTools(w *World, wss *Workspaces, rc transcript.Config, setup ToolSetup) (decoration, []tool.Tool, error) {
	var d decoration
	ws, err := wss.Open(rc.Workspace)
	if err != nil {
		return d, nil, err
	}
	if d.mode, err = tool.ParseMode(rc.PermissionMode); err != nil {
		return d, nil, err
	}
	if d.policy, err = tool.ParseTrifecta(rc.Trifecta); err != nil {
		return d, nil, err
	}
	d.asker = setup.Asker
	if d.asker == nil && w.InTTY {
		d.asker = tool.NewTerminalAsker(w.In, w.errw())
	}
	d.secrets = Secrets(w)
	cfg := setup.Config
	if cfg == nil {
		if cfg, err = LoadConfig(w); err != nil {
			return d, nil, err
		}
	}
	d.rules = setup.Rules
	if d.rules == nil {
		if d.rules, err = PermissionRules(w, cfg, rc.Workspace, nil); err != nil {
			return d, nil, err
		}
	}
	// A workspace not trusted (or a record that does not say) makes what
	// the tools read there untrusted as well as private.
	opts := builtin.Options{Env: credential.Scrub(w.environ()), Secrets: d.secrets, RefusePrivate: cfg.WebFetch.RefusePrivate,
		UntrustedWorkspace: !trusted(rc)}
	if store, err := Blobs(w); err == nil {
		opts.Keep = store.Put
	}
	var note string
	opts.Sandbox, note = w.Sandbox(rc.Sandbox, rc.SandboxNetwork, len(rc.SandboxAllowDomains) > 0)
	if opts.Sandbox.Egress {
		opts.AllowDomains, opts.EgressSends = rc.SandboxAllowDomains, len(rc.SandboxSendDomains) > 0
	}
	if note != "" && !wss.sandboxNoted {
		w.sandboxNote(note)
		wss.sandboxNoted = true
	}
	if opts.Sandbox.Confined() {
		if opts.Self, err = w.self(); err != nil {
			return d, nil, err
		}
		opts.SelfName = HelperName
		if opts.ReadDeny, err = readDeny(w, cfg); err != nil {
			return d, nil, err
		}
	}
	// No tool may touch mecha's home, whatever the workspace.
	if mh, err := w.Home(); err == nil {
		ws = ws.Protect(mh)
		if contains(ws.Root(), mh) && !wss.homeNoted {
			fmt.Fprintf(w.errw(), "mecha: the workspace holds mecha's home (%s): the file tools refuse it and the shell cannot change it\n", mh)
			wss.homeNoted = true
		}
	}
	all := builtin.All(ws, opts)
	for _, t := range setup.MCP {
		all = append(all, t)
	}
	return d, all, nil
}

// providerKeys are the variables providers read their keys from.
var providerKeys = []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY"}

// Secrets are the values no tool result may carry: the providers' keys,
// the value of every variable of the environment whose name is a
// credential.Named (the ones credential.Scrub withholds), and, whatever a
// variable is called, the credentials its value holds (credential.InValue:
// a URL's userinfo and password). A command can still reach them by other
// routes (mecha's /proc/PID/environ as root, a file, another process), so
// BuildTools redacts them, and their encodings, from every result, before
// the built-ins cut their output; values shorter than tool.MinSecretLen are
// not redacted.
func Secrets(w *World) []tool.Secret {
	var out []tool.Secret
	for _, name := range providerKeys {
		if v := w.getenv(name); v != "" {
			out = append(out, tool.Secret{Name: name, Value: v})
		}
	}
	for _, kv := range w.environ() {
		name, v, _ := strings.Cut(kv, "=")
		if v != "" && credential.Named(name) {
			out = append(out, tool.Secret{Name: name, Value: v})
		}
		for _, c := range credential.InValue(v) {
			out = append(out, tool.Secret{Name: name, Value: c})
		}
	}
	return out
}

// ShareSecrets are Secrets and, for a copy that leaves for other eyes (a
// shared session), the remotes' AWS credentials wherever they were read
// from: the environment or the shared credentials file, and the access
// key id, which credential.Named does not count as a secret.
func ShareSecrets(w *World) []tool.Secret {
	out := Secrets(w)
	if c, err := RemoteCredentials(w.getenv); err == nil {
		for _, s := range []tool.Secret{{Name: "AWS_ACCESS_KEY_ID", Value: c.AccessKey},
			{Name: "AWS_SECRET_ACCESS_KEY", Value: c.SecretKey}, {Name: "AWS_SESSION_TOKEN", Value: c.SessionToken}} {
			if s.Value != "" {
				out = append(out, s)
			}
		}
	}
	return out
}
