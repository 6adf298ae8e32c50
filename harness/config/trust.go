package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/mecha-agent/mecha/internal/atomicfile"
	"github.com/mecha-agent/mecha/internal/safeopen"
	"github.com/mecha-agent/mecha/internal/workdir"
)

// trustedKey is the top-level key of the trusted workspaces.
const trustedKey = "trusted_workspaces"

// TrustedEntry returns the entry of TrustedWorkspaces that covers dir: dir
// itself or a directory above it, both compared canonical (absolute,
// clean, symbolic links resolved); "" when none does. The entry covering
// dir most closely wins.
func (c *Config) TrustedEntry(dir string) string {
	if dir == "" {
		return ""
	}
	d := workdir.Canonical(dir)
	best := ""
	for _, e := range c.TrustedWorkspaces {
		ce := workdir.Canonical(e)
		if Covers(ce, d) && len(ce) > len(workdir.Canonical(best)) {
			best = e
		}
	}
	return best
}

// Covers reports whether the trusted directory entry covers dir: dir is
// entry or lies beneath it. Both must be canonical.
func Covers(entry, dir string) bool {
	if entry == "" || dir == "" {
		return false
	}
	if entry == dir || entry == string(filepath.Separator) {
		return true
	}
	return strings.HasPrefix(dir, entry+string(filepath.Separator))
}

// checkTrusted refuses an entry that is not an absolute path: a relative
// one would trust whatever directory mecha is started in.
func checkTrusted(dirs []string) error {
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			return fmt.Errorf("%s: %q is not an absolute path", trustedKey, d)
		}
	}
	return nil
}

// SetTrustedWorkspaces makes the config.toml at path say
// trusted_workspaces = dirs, and changes nothing else in it: the key's
// line is replaced where it is, or put at the top of the file (where a
// top-level key must be) when it is absent; comments, order and every
// other byte are kept. The new text is decoded as Load decodes it before
// it replaces the file, whole (atomicfile), so a file that does not parse
// is refused and left as it was. A missing file (or home) is created.
func SetTrustedWorkspaces(path string, dirs []string) error {
	if err := checkTrusted(dirs); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	data, err := safeopen.ReadFile(path, MaxFileSize)
	perm := fs.FileMode(0o600)
	switch {
	case errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		data = nil
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return fmt.Errorf("config: %w", err)
		}
	case err != nil:
		return fmt.Errorf("config: %w", err)
	default:
		if fi, err := os.Stat(path); err == nil {
			perm = fi.Mode().Perm()
		}
	}
	if _, err := decode(path, data); err != nil {
		return fmt.Errorf("%w (fix it before trusting a workspace)", err)
	}
	line, err := toml.Marshal(map[string][]string{trustedKey: dirs})
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	line = bytes.TrimRight(line, "\n")
	out, err := replaceTopLevel(data, trustedKey, line)
	if err != nil {
		return fmt.Errorf("config: %s: %w", path, err)
	}
	c, err := decode(path, out)
	if err != nil {
		return err
	}
	if !slices.Equal(c.TrustedWorkspaces, dirs) {
		return fmt.Errorf("config: %s: %s would read back as %q, not %q", path, trustedKey, c.TrustedWorkspaces, dirs)
	}
	return atomicfile.WriteFile(path, out, perm)
}

// replaceTopLevel returns data with the top-level key's key/value
// expression replaced by line, or line and a newline put first when the
// key is not there.
func replaceTopLevel(data []byte, key string, line []byte) ([]byte, error) {
	var p unstable.Parser
	p.Reset(data)
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			// Past the top level: the key is not there.
			return prepend(data, line), nil
		case unstable.KeyValue:
			k := e.Key()
			if !k.Next() {
				continue
			}
			first := string(k.Node().Data)
			if first != key || k.Next() {
				continue
			}
			r := e.Raw
			out := slices.Concat(data[:r.Offset], line, data[r.Offset+r.Length:])
			return out, nil
		}
	}
	if err := p.Error(); err != nil {
		return nil, err
	}
	return prepend(data, line), nil
}

func prepend(data, line []byte) []byte {
	out := slices.Concat(line, []byte("\n"))
	if len(data) > 0 {
		out = append(out, '\n')
	}
	return append(out, data...)
}
