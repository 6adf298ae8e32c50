package harness

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/pelletier/go-toml/v2"

	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/harness/config"
	"github.com/mecha-agent/mecha/internal/atomicfile"
	"github.com/mecha-agent/mecha/internal/safeopen"
	"github.com/mecha-agent/mecha/internal/workdir"
	"github.com/mecha-agent/mecha/record/transcript"
)

// WorkspaceRulesFile is a workspace's own permission rules, beside its
// code: its deny rules always hold; its allow rules only in a trusted
// workspace (config.toml's trusted_workspaces, mecha trust). A repository is
// someone else's text: one that ships a file allowing "shell" must not
// thereby run commands unasked on the machine of whoever opens it.
const WorkspaceRulesFile = ".mecha/permissions.toml"

// SavedRulesFile, under $MECHA_HOME, holds the rules saved from a
// permission prompt ("always allow ... here"), workspace by workspace.
// It is the user's file, as config.toml is: its allow rules hold.
const SavedRulesFile = "permissions.toml"

// rulesFile is the shape of a workspace's .mecha/permissions.toml.
type rulesFile struct {
	Allow []string `toml:"allow"`
	Deny  []string `toml:"deny"`
}

// savedRules is the shape of $MECHA_HOME/permissions.toml.
type savedRules struct {
	Workspace []savedWorkspace `toml:"workspace"`
}

type savedWorkspace struct {
	Path  string   `toml:"path"`
	Allow []string `toml:"allow,omitempty"`
	Deny  []string `toml:"deny,omitempty"`
}

// maxRulesFile bounds a rules file.
const maxRulesFile = 1 << 20

// PermissionRules are the saved rules of a workspace: config.toml's
// [permissions], the rules saved for the workspace in
// $MECHA_HOME/permissions.toml, and the workspace's own
// .mecha/permissions.toml (its allow rules only when config.toml trusts
// the workspace; note, when not nil, is told once of allow rules left
// out). Deny wins over allow whatever their source (tool.Rules).
func PermissionRules(w *World, cfg *config.Config, workspace string, note func(string)) (*tool.Rules, error) {
	rules := &tool.Rules{Workspace: workspace}
	from, err := tool.ParseRules(cfg.Permissions.Allow, cfg.Permissions.Deny, "config.toml")
	if err != nil {
		return nil, err
	}
	rules.Add(from)
	if workspace == "" {
		return rules, nil
	}
	same, err := workdir.Same(workspace)
	if err != nil {
		return nil, err
	}
	home, err := w.Home()
	if err != nil {
		return nil, err
	}
	saved, err := readSaved(filepath.Join(home, SavedRulesFile))
	if err != nil {
		return nil, err
	}
	for _, s := range saved.Workspace {
		if !same(s.Path) {
			continue
		}
		from, err := tool.ParseRules(s.Allow, s.Deny, filepath.Join(home, SavedRulesFile))
		if err != nil {
			return nil, err
		}
		rules.Add(from)
	}
	var own rulesFile
	if err := readTOML(filepath.Join(workspace, WorkspaceRulesFile), &own); err != nil {
		return nil, err
	}
	trusted := cfg.TrustedEntry(workspace) != ""
	if !trusted && len(own.Allow) > 0 {
		if note != nil {
			note(fmt.Sprintf("mecha: the %d allow %s of %s %s ignored: this workspace is not trusted (its deny rules hold; mecha trust trusts it)",
				len(own.Allow), plural(len(own.Allow), "rule", "rules"), WorkspaceRulesFile, plural(len(own.Allow), "is", "are")))
		}
		own.Allow = nil
	}
	from, err = tool.ParseRules(own.Allow, own.Deny, WorkspaceRulesFile)
	if err != nil {
		return nil, err
	}
	rules.Add(from)
	return rules, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// RecordRules is rules as a config record keeps them.
func RecordRules(rules *tool.Rules) []transcript.PermissionRule {
	if rules.Empty() {
		return nil
	}
	var out []transcript.PermissionRule
	for _, r := range rules.Allow {
		out = append(out, transcript.PermissionRule{Rule: r.String(), Effect: "allow", Source: r.Source})
	}
	for _, r := range rules.Deny {
		out = append(out, transcript.PermissionRule{Rule: r.String(), Effect: "deny", Source: r.Source})
	}
	return out
}

// SaveAllowRule adds rule to the allow rules saved for workspace in
// $MECHA_HOME/permissions.toml (the file replaced whole).
func SaveAllowRule(w *World, workspace, rule string) error {
	if _, err := tool.ParseRule(rule); err != nil {
		return err
	}
	home, err := w.Home()
	if err != nil {
		return err
	}
	path := filepath.Join(home, SavedRulesFile)
	saved, err := readSaved(path)
	if err != nil {
		return err
	}
	same, err := workdir.Same(workspace)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(saved.Workspace, func(s savedWorkspace) bool { return same(s.Path) })
	if i < 0 {
		saved.Workspace = append(saved.Workspace, savedWorkspace{Path: workspace})
		i = len(saved.Workspace) - 1
	}
	if !slices.Contains(saved.Workspace[i].Allow, rule) {
		saved.Workspace[i].Allow = append(saved.Workspace[i].Allow, rule)
	}
	var b bytes.Buffer
	b.WriteString("# Permission rules saved from mecha's prompts (\"always allow ... here\"), by workspace.\n# Edit freely: allow and deny take the rules config.toml's [permissions] takes.\n\n")
	if err := toml.NewEncoder(&b).Encode(saved); err != nil {
		return err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, b.Bytes(), 0o600)
}

func readSaved(path string) (*savedRules, error) {
	var s savedRules
	return &s, readTOML(path, &s)
}

// readTOML decodes a rules file strictly; a missing file is empty.
func readTOML(path string, v any) error {
	data, err := safeopen.ReadFile(path, maxRulesFile)
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("permission rules: %w", err)
	}
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("permission rules: %s: %v", path, err)
	}
	return nil
}
