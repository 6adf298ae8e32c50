package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSetTrustedWorkspacesKeepsTheRest(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	orig := "# mine\ndefault_provider = \"local\" # inline\n\n[web_fetch]\nrefuse_private = true\n"
	if err := os.WriteFile(path, []byte(orig), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := SetTrustedWorkspaces(path, []string{"/a", "/b c"}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if !strings.HasSuffix(string(b), orig) || !strings.HasPrefix(string(b), "trusted_workspaces = [") {
		t.Fatalf("added:\n%s", b)
	}
	c, err := Load(path)
	if err != nil || !slices.Equal(c.TrustedWorkspaces, []string{"/a", "/b c"}) || !c.WebFetch.RefusePrivate {
		t.Fatalf("read back %+v, %v", c, err)
	}
	// Replaced where it stands, the rest byte for byte.
	if err := SetTrustedWorkspaces(path, []string{"/b c"}); err != nil {
		t.Fatal(err)
	}
	b2, _ := os.ReadFile(path)
	if want := "trusted_workspaces = ['/b c']\n\n" + orig; string(b2) != want {
		t.Fatalf("replaced:\n%s\nwant:\n%s", b2, want)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the file's own 0640", fi.Mode().Perm())
	}
	// A key of that name inside a table is not the top-level one.
	table := "[mcp.servers.x]\ncommand = \"x\"\n"
	p2 := filepath.Join(dir, "t.toml")
	os.WriteFile(p2, []byte(table), 0o600)
	if err := SetTrustedWorkspaces(p2, []string{"/x"}); err != nil {
		t.Fatal(err)
	}
	if c, err := Load(p2); err != nil || !slices.Equal(c.TrustedWorkspaces, []string{"/x"}) {
		t.Fatalf("%+v %v", c, err)
	}
}

func TestSetTrustedWorkspacesRefuses(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	if err := SetTrustedWorkspaces(path, []string{"relative"}); err == nil {
		t.Error("a relative entry was written")
	}
	bad := "default_provider = \n"
	os.WriteFile(path, []byte(bad), 0o600)
	if err := SetTrustedWorkspaces(path, []string{"/a"}); err == nil {
		t.Error("a config.toml that does not parse was rewritten")
	}
	if b, _ := os.ReadFile(path); string(b) != bad {
		t.Errorf("the bad file changed: %q", b)
	}
	// A missing file (and home) is created.
	fresh := filepath.Join(dir, "home", "config.toml")
	if err := SetTrustedWorkspaces(fresh, []string{"/a"}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, []byte("trusted_workspaces = [\"rel\"]\n"), 0o600)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "not an absolute path") {
		t.Errorf("a relative entry loaded: %v", err)
	}
}

func TestTrustedEntry(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "src")
	proj := filepath.Join(src, "proj")
	os.MkdirAll(proj, 0o700)
	link := filepath.Join(root, "link")
	os.Symlink(proj, link)
	sibling := filepath.Join(root, "srcother")
	os.MkdirAll(sibling, 0o700)
	c := &Config{TrustedWorkspaces: []string{src, proj}}
	for dir, want := range map[string]string{
		src: src, proj: proj, filepath.Join(proj, "sub"): proj, link: proj, sibling: "", root: "",
	} {
		if got := c.TrustedEntry(dir); got != want {
			t.Errorf("TrustedEntry(%s) = %q, want %q", dir, got, want)
		}
	}
	if got := (&Config{TrustedWorkspaces: []string{"/"}}).TrustedEntry(proj); got != "/" {
		t.Errorf("/ covers everything: %q", got)
	}
}
