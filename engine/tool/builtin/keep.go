package builtin

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/mecha-agent/mecha/record/transcript"
)

// keep keeps the content of name before a write replaces it: data when
// the caller read it already, else the file as it is (none when it does
// not exist). Nil keep keeps nothing.
func (w Workspace) keep(keepFn func([]byte) (string, error), name string, data []byte) (*keptChange, error) {
	if keepFn == nil {
		return nil, nil
	}
	c := &keptChange{path: filepath.ToSlash(filepath.Clean(name))}
	if data == nil {
		f, err := w.fs.Open(name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return c, nil // created: a rewind removes it
		case err != nil:
			return nil, err
		}
		st, err := f.Stat()
		if err == nil && !st.Mode().IsRegular() {
			f.Close()
			return c, nil // writeAtomic refuses it
		}
		data, err = io.ReadAll(f)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	sum, err := keepFn(data)
	if err != nil {
		return nil, err
	}
	c.before = sum
	return c, nil
}

// keptChange is a file's content before a write, kept.
type keptChange struct {
	path, before string
}

// after is the change once content is written.
func (c *keptChange) after(content []byte) []transcript.FileChange {
	if c == nil {
		return nil
	}
	h := sha256.Sum256(content)
	return []transcript.FileChange{{Path: c.path, Before: c.before, After: hex.EncodeToString(h[:])}}
}
