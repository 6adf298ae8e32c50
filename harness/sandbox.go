package harness

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/mecha-agent/mecha/engine/sandbox"
	"github.com/mecha-agent/mecha/harness/config"
	"github.com/mecha-agent/mecha/record/transcript"
)

// HelperName is the name mecha starts its sandbox helper under.
const HelperName = "mecha"

// Sandbox returns what confines the shell on this kernel for a mode
// ("" is the unconfined shell of commands that record no sandbox) and
// whether the network is to stay on, with a one-line note when the kernel
// enforces less than that ("" when it does not).
func (w *World) Sandbox(mode string, network, egress bool) (sandbox.Setting, string) {
	if mode == "" || mode == sandbox.ModeNone {
		// Nothing to probe (the namespace trial starts a process).
		return sandbox.None, ""
	}
	sup := w.SandboxSupport
	if sup == nil {
		sup = sandbox.Probe
	}
	return sandbox.Resolve(sandbox.Setting{Mode: mode, Network: network, Egress: egress}, sup())
}

// self returns mecha's executable.
func (w *World) self() (string, error) {
	p, err := w.executable()
	if err != nil {
		return "", fmt.Errorf("sandbox: mecha's executable: %w", err)
	}
	return p, nil
}

// lowerSandbox lowers rc's sandbox to what this kernel enforces of it,
// saying so in one line on the World's Err when that is less, so that a
// record never claims more.
func lowerSandbox(w *World, rc *transcript.Config) {
	got, note := w.Sandbox(rc.Sandbox, rc.SandboxNetwork, len(rc.SandboxAllowDomains) > 0)
	w.sandboxNote(note)
	rc.Sandbox, rc.SandboxNetwork, rc.SandboxNamespaces = got.Mode, got.Network, got.Namespaces
	if !got.Confined() {
		rc.SandboxReadDeny = nil
	}
	if !got.Egress {
		rc.SandboxAllowDomains, rc.SandboxSendDomains = nil, nil
	}
}

// egressDomains completes rc's allowlist with config.toml's [sandbox]
// allow_domains, marks those of send_domains, and lowers it to what this
// kernel enforces (none without namespaces: the network stays cut).
func egressDomains(w *World, cfg *config.Config, rc *transcript.Config) error {
	if rc.Sandbox != sandbox.ModeLandlock || rc.SandboxNetwork {
		rc.SandboxAllowDomains, rc.SandboxSendDomains = nil, nil
		return nil
	}
	all := slices.Clone(rc.SandboxAllowDomains)
	var send []string
	if cfg != nil {
		for _, d := range cfg.Sandbox.AllowDomains {
			if err := sandbox.CheckDomain(d); err != nil {
				return fmt.Errorf("config.toml: [sandbox] allow_domains: %w", err)
			}
		}
		all = append(all, cfg.Sandbox.AllowDomains...)
		for _, d := range all {
			if slices.Contains(cfg.Sandbox.SendDomains, d) {
				send = append(send, d)
			}
		}
	}
	slices.Sort(all)
	slices.Sort(send)
	rc.SandboxAllowDomains, rc.SandboxSendDomains = slices.Compact(all), slices.Compact(send)
	if len(rc.SandboxAllowDomains) == 0 {
		rc.SandboxAllowDomains, rc.SandboxSendDomains = nil, nil
	}
	lowerSandbox(w, rc)
	return nil
}

// trustedHosts are config.toml's [trifecta] trusted_hosts, checked, sorted
// and each once (nil for none), as the config record keeps them.
func trustedHosts(cfg *config.Config) ([]string, error) {
	if cfg == nil || len(cfg.Trifecta.TrustedHosts) == 0 {
		return nil, nil
	}
	for _, h := range cfg.Trifecta.TrustedHosts {
		if err := sandbox.CheckDomain(h); err != nil {
			return nil, fmt.Errorf("config.toml: [trifecta] trusted_hosts: %w", err)
		}
	}
	hs := slices.Clone(cfg.Trifecta.TrustedHosts)
	slices.Sort(hs)
	return slices.Compact(hs), nil
}

// readDeny is what the confined shell may not read: sandbox.DefaultDeny
// of $HOME and mecha's home, with config.toml's [sandbox] read_deny added
// and read_allow lifted.
func readDeny(w *World, cfg *config.Config) ([]string, error) {
	home := w.getenv("HOME")
	mh, err := w.Home()
	if err != nil {
		return nil, err
	}
	var deny, allow []string
	if cfg != nil {
		deny, allow = cfg.Sandbox.ReadDeny, cfg.Sandbox.ReadAllow
	}
	d, err := sandbox.ReadDeny(sandbox.DefaultDeny(home, mh), deny, allow, home)
	if err != nil {
		return nil, fmt.Errorf("config.toml: %w", err)
	}
	return d, nil
}

// contains reports whether dir is or holds p (both cleaned, links
// resolved where they exist).
func contains(dir, p string) bool {
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && filepath.IsLocal(rel)
}

// sandboxNote writes a sandbox note on Err, once per World whatever
// asks for it (resolving a run's settings, then building its tools).
func (w *World) sandboxNote(note string) {
	if note == "" || w.sandboxNoted[note] {
		return
	}
	if w.sandboxNoted == nil {
		w.sandboxNoted = map[string]bool{}
	}
	w.sandboxNoted[note] = true
	fmt.Fprintln(w.errw(), "mecha: "+note)
}
