package root_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/cli/root"
)

// manualDir is where the manual generated from the command tree is kept,
// relative to this package.
var manualDir = filepath.Join("..", "..", "docs", "manual")

// genManual writes the manual of the command tree into dir: one Markdown
// file per command a person can run or name, by cobra's generator. Each
// long description is put in a fenced block, since it is written for a
// terminal (indented tables, <placeholders>) and Markdown would reflow it
// or drop it. No command carries the generator's dated footer, so the
// files change only when the help does.
func genManual(t *testing.T, dir string) {
	t.Helper()
	cmd := root.NewCmdRoot(&cmdkit.Env{})
	var prepare func(c *cobra.Command)
	prepare = func(c *cobra.Command) {
		c.DisableAutoGenTag = true
		if c.Long != "" {
			fence := "```"
			for strings.Contains(c.Long, fence) {
				fence += "`"
			}
			c.Long = fence + "\n" + c.Long + "\n" + fence
		}
		for _, sub := range c.Commands() {
			prepare(sub)
		}
	}
	prepare(cmd)
	if err := doc.GenMarkdownTree(cmd, dir); err != nil {
		t.Fatalf("generating the manual: %v", err)
	}
}

// mdFiles are the names of the Markdown files in dir, sorted.
func mdFiles(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range names {
		names[i] = filepath.Base(n)
	}
	slices.Sort(names)
	return names
}

// TestManual fails when docs/manual is not what the command tree's help
// generates today: a file that differs, is missing or is left over. With
// -update it rewrites docs/manual instead.
func TestManual(t *testing.T) {
	t.Parallel()
	got := t.TempDir()
	genManual(t, got)
	const regen = "the manual is stale: regenerate it with\n\tgo test ./cli/root -run TestManual -update"
	if *update {
		if err := os.MkdirAll(manualDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range mdFiles(t, manualDir) {
			if err := os.Remove(filepath.Join(manualDir, name)); err != nil {
				t.Fatal(err)
			}
		}
		for _, name := range mdFiles(t, got) {
			b, err := os.ReadFile(filepath.Join(got, name))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(manualDir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	want := mdFiles(t, manualDir)
	have := mdFiles(t, got)
	for _, name := range have {
		if !slices.Contains(want, name) {
			t.Errorf("docs/manual/%s is missing; %s", name, regen)
			continue
		}
		g, err := os.ReadFile(filepath.Join(got, name))
		if err != nil {
			t.Fatal(err)
		}
		w, err := os.ReadFile(filepath.Join(manualDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(g, w) {
			t.Errorf("docs/manual/%s differs from the help it is generated from at line %d; %s", name, firstDiff(w, g), regen)
		}
	}
	for _, name := range want {
		if !slices.Contains(have, name) {
			t.Errorf("docs/manual/%s documents no command; %s", name, regen)
		}
	}
}

// firstDiff is the number of the first line where a and b differ.
func firstDiff(a, b []byte) int {
	al, bl := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := range min(len(al), len(bl)) {
		if !bytes.Equal(al[i], bl[i]) {
			return i + 1
		}
	}
	return min(len(al), len(bl)) + 1
}
