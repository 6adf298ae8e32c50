package harness

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/mecha-agent/mecha/harness/config"
	"github.com/mecha-agent/mecha/internal/workdir"
	"github.com/mecha-agent/mecha/record/transcript"
)

// WorkspaceTrust decides whether the workspace dir is trusted for an
// attach: trusted when an entry of config.toml's trusted_workspaces covers
// it (the directory or a parent), and, for a session resumed or replayed,
// only if the attach it continues was recorded trusted too (recorded; nil
// for a new session, or a record older than the field, which is judged by
// today's configuration alone). asked says the chat's question was put
// (its answer is config.toml's entry, written or not).
//
// Trust only narrows over a session's life: a session recorded untrusted
// stays untrusted when resumed after its workspace was trusted (what it
// read then is in its conversation, and its system prompt was resolved
// without the project instructions), and one recorded trusted becomes
// untrusted once the entry is revoked.
func WorkspaceTrust(cfg *config.Config, dir string, recorded *transcript.WorkspaceTrust, asked bool) transcript.WorkspaceTrust {
	entry := cfg.TrustedEntry(dir)
	t := transcript.WorkspaceTrust{Trusted: entry != "", By: transcript.TrustByDefault, Entry: entry}
	if entry != "" {
		t.By = transcript.TrustByConfig
	}
	if asked {
		t.By = transcript.TrustByQuestion
	}
	if recorded != nil && !recorded.Trusted && t.Trusted {
		t.Trusted, t.By = false, transcript.TrustByRecord
	}
	return t
}

// trusted reports whether an attach's config record says its workspace was
// trusted; a record without the decision is not.
func trusted(rc transcript.Config) bool {
	return rc.WorkspaceTrust != nil && rc.WorkspaceTrust.Trusted
}

// recordedTrust is the decision of the last attach of prev, when it ran in
// dir (nil otherwise: a new session, a record older than the field, or a
// resume moved to another workspace with -w, judged afresh).
func recordedTrust(prev *transcript.Config, dir string) *transcript.WorkspaceTrust {
	if prev == nil || prev.WorkspaceTrust == nil || workdir.Canonical(prev.Workspace) != workdir.Canonical(dir) {
		return nil
	}
	return prev.WorkspaceTrust
}

// untrustedNote is the note a run in an untrusted workspace shows once,
// when the workspace holds project instructions it left out.
func untrustedNote(dir, instructions string) string {
	return fmt.Sprintf("note: %s left out of the system prompt: the workspace %s is not trusted, and what the tools read there counts as untrusted (mecha trust %s trusts it)", instructions, dir, dir)
}

// TrustWorkspace adds dir (made absolute and canonical; it must be a
// directory) to config.toml's trusted_workspaces, unless an entry covers
// it already. It returns the canonical path and the entry that covered it
// before ("" when it was added).
func TrustWorkspace(w *World, dir string) (canonical, coveredBy string, err error) {
	abs, err := workdir.Dir(dir)
	if err != nil {
		return "", "", err
	}
	canonical = workdir.Canonical(abs)
	cfg, err := LoadConfig(w)
	if err != nil {
		return canonical, "", err
	}
	if e := cfg.TrustedEntry(canonical); e != "" {
		return canonical, e, nil
	}
	path, err := configPath(w)
	if err != nil {
		return canonical, "", err
	}
	return canonical, "", config.SetTrustedWorkspaces(path, append(slices.Clone(cfg.TrustedWorkspaces), canonical))
}

// RevokeWorkspace removes dir's own entry from trusted_workspaces. It
// returns the entries removed (those naming dir, canonical or as written)
// and the entry that still covers dir (a parent's), if any.
func RevokeWorkspace(w *World, dir string) (removed []string, stillBy string, err error) {
	cfg, err := LoadConfig(w)
	if err != nil {
		return nil, "", err
	}
	want := canonicalArg(dir)
	var keep []string
	for _, e := range cfg.TrustedWorkspaces {
		if workdir.Canonical(e) == want || e == dir {
			removed = append(removed, e)
			continue
		}
		keep = append(keep, e)
	}
	if len(removed) > 0 {
		path, err := configPath(w)
		if err != nil {
			return nil, "", err
		}
		if keep == nil {
			keep = []string{}
		}
		if err := config.SetTrustedWorkspaces(path, keep); err != nil {
			return nil, "", err
		}
		cfg.TrustedWorkspaces = keep
	}
	return removed, cfg.TrustedEntry(want), nil
}

// canonicalArg is a directory argument made absolute and canonical; one
// that no longer exists is compared as written (made absolute).
func canonicalArg(dir string) string {
	if abs, err := workdir.Dir(dir); err == nil {
		return workdir.Canonical(abs)
	}
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	return workdir.Canonical(abs)
}

// configPath is where config.toml is.
func configPath(w *World) (string, error) {
	home, err := w.Home()
	if err != nil {
		return "", err
	}
	return home + "/config.toml", nil
}

// Workspace is the directory the door's next prompt works in: -w, else the
// resumed session's, else the current directory.
func (d *Door) Workspace() (string, error) { return d.workspace() }

// TrustWorkspace trusts the door's workspace as mecha trust does
// (config.toml's trusted_workspaces), and the door reads config.toml
// again so its next prompt is judged by it. It returns the directory.
// Call it between prompts (the chat asks before its first), never while
// one runs.
func (d *Door) TrustWorkspace() (string, error) {
	dir, err := d.workspace()
	if err != nil {
		return "", err
	}
	canonical, _, err := TrustWorkspace(d.world, dir)
	if err != nil {
		return canonical, err
	}
	cfg, err := LoadConfig(d.world)
	if err != nil {
		return canonical, err
	}
	d.cfg = cfg
	return canonical, nil
}

// Trusted reports whether an entry of the door's config.toml covers dir.
func (d *Door) Trusted(dir string) bool { return d.cfg.TrustedEntry(dir) != "" }
