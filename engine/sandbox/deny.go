package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// credentialPaths are the files and directories under a home directory
// that hold credentials or what was typed (histories): a confined command
// may not read them by default.
var credentialPaths = []string{
	".ssh", ".aws", ".config/gcloud", ".azure", ".kube", ".docker/config.json",
	".netrc", ".git-credentials", ".npmrc", ".pypirc", ".gnupg",
	".bash_history", ".zsh_history", ".local/share/fish/fish_history",
	".python_history", ".node_repl_history", ".psql_history", ".mysql_history",
	".sqlite_history", ".lesshst", ".histfile",
}

// CredentialPaths are the paths, relative to a home directory, that
// DefaultDeny denies there.
func CredentialPaths() []string { return slices.Clone(credentialPaths) }

// DefaultDeny returns the paths a confined command may not read unless
// config.toml allows them: mechaHome (mecha's sessions, config and learned
// rules), the credential files and shell histories under home, and every
// other user's home (the directories in /home, and /root when home is not
// /root), enumerated now. Paths are absolute and clean; one that does not
// exist is kept (the helper skips it).
func DefaultDeny(home, mechaHome string) []string {
	var out []string
	if mechaHome != "" {
		out = append(out, filepath.Clean(mechaHome))
	}
	if home != "" {
		for _, p := range credentialPaths {
			out = append(out, filepath.Join(home, p))
		}
	}
	out = append(out, otherHomes(home, "/home", "/root")...)
	return out
}

// otherHomes are the directories in base (and extra) that are not home
// and do not hold it.
func otherHomes(home, base string, extra ...string) []string {
	var cand []string
	if ents, err := os.ReadDir(base); err == nil {
		for _, e := range ents {
			if e.IsDir() {
				cand = append(cand, filepath.Join(base, e.Name()))
			}
		}
	}
	cand = append(cand, extra...)
	var out []string
	for _, c := range cand {
		if home != "" && (c == filepath.Clean(home) || within(home, c)) {
			continue
		}
		if _, err := os.Lstat(c); err == nil {
			out = append(out, c)
		}
	}
	return out
}

// ReadDeny is the deny list of a run: defaults, then config.toml's
// read_deny added and its read_allow taken away (an allowed path lifts
// every denied path equal to it or beneath it). A leading "~/" is home.
// Each path must be absolute after that; the result is sorted, with no
// duplicates.
func ReadDeny(defaults, deny, allow []string, home string) ([]string, error) {
	expand := func(list []string, key string) ([]string, error) {
		var out []string
		for _, p := range list {
			q := p
			if q == "~" || strings.HasPrefix(q, "~/") {
				if home == "" {
					return nil, fmt.Errorf("sandbox: %s: %q needs a home directory ($HOME is not set)", key, p)
				}
				q = filepath.Join(home, strings.TrimPrefix(q, "~"))
			}
			if !filepath.IsAbs(q) {
				return nil, fmt.Errorf("sandbox: %s: %q is not an absolute path (nor ~/...)", key, p)
			}
			out = append(out, filepath.Clean(q))
		}
		return out, nil
	}
	d, err := expand(deny, "read_deny")
	if err != nil {
		return nil, err
	}
	a, err := expand(allow, "read_allow")
	if err != nil {
		return nil, err
	}
	all := append(slices.Clone(defaults), d...)
	out := all[:0]
	for _, p := range all {
		lifted := false
		for _, x := range a {
			if p == x || within(p, x) {
				lifted = true
				break
			}
		}
		if !lifted {
			out = append(out, filepath.Clean(p))
		}
	}
	sort.Strings(out)
	return slices.Compact(out), nil
}

// within reports whether p is strictly beneath dir.
func within(p, dir string) bool {
	p, dir = filepath.Clean(p), filepath.Clean(dir)
	if dir == "/" {
		return p != "/"
	}
	return strings.HasPrefix(p, dir+"/")
}

// Grants are the paths Landlock is given to allow a tree with holes in
// it: Dirs and Files whole, and Lists only their own entries' names (a
// directory on the way to a hole).
type Grants struct {
	Dirs, Files, Lists []string
}

// Holes works out, for Landlock (which can only allow), how to allow the
// tree at root except the holes beneath it: each directory on the way from
// root to a hole is only listed, and every other entry in it is allowed
// whole, enumerated now. Symbolic links are not followed (what they lead
// to is allowed, or not, by its own path). What this cannot cover: an
// entry created later in a listed directory is not allowed, and the names
// in a hole can still be listed. A hole equal to root allows nothing;
// holes outside root are ignored.
func Holes(root string, holes []string) Grants {
	root = filepath.Clean(root)
	var in []string
	for _, h := range holes {
		h = filepath.Clean(h)
		if h == root {
			return Grants{}
		}
		if within(h, root) {
			in = append(in, h)
		}
	}
	var g Grants
	var walk func(dir string)
	walk = func(dir string) {
		for _, h := range in {
			if h == dir {
				return
			}
		}
		deeper := false
		for _, h := range in {
			if within(h, dir) {
				deeper = true
				break
			}
		}
		fi, err := os.Lstat(dir)
		if err != nil || fi.Mode()&os.ModeSymlink != 0 {
			return
		}
		if !fi.IsDir() {
			g.Files = append(g.Files, dir)
			return
		}
		if !deeper {
			g.Dirs = append(g.Dirs, dir)
			return
		}
		g.Lists = append(g.Lists, dir)
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range ents {
			walk(filepath.Join(dir, e.Name()))
		}
	}
	walk(root)
	return g
}
