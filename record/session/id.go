package session

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Ext is the extension of a session file.
const Ext = ".jsonl"

// idLayout is the time part of an id: UTC, sortable by name.
const idLayout = "20060102T150405"

var (
	// ErrNotFound means no session matches an id or prefix.
	ErrNotFound = errors.New("session: not found")
	// ErrInvalidID means an argument is neither an id, a prefix of one, nor
	// a path to a transcript.
	ErrInvalidID = errors.New("session: invalid id")
)

// AmbiguousError is returned when a prefix matches more than one session.
type AmbiguousError struct {
	Prefix     string
	Candidates []string // ids, newest first
}

func (e *AmbiguousError) Error() string {
	const show = 10
	c := e.Candidates
	more := ""
	if len(c) > show {
		more = fmt.Sprintf(" and %d more", len(c)-show)
		c = c[:show]
	}
	return fmt.Sprintf("session: ambiguous id %q matches %d sessions: %s%s", e.Prefix, len(e.Candidates), strings.Join(c, ", "), more)
}

// NewID returns a fresh session id: the UTC time to the second, a dash, and
// 8 random hex digits. rnd nil means crypto/rand.
func NewID(now time.Time, rnd io.Reader) (string, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	var b [4]byte
	if _, err := io.ReadFull(rnd, b[:]); err != nil {
		return "", fmt.Errorf("session: new id: %w", err)
	}
	return now.UTC().Format(idLayout) + "-" + hex.EncodeToString(b[:]), nil
}

// ValidID reports whether s has the shape of a full session id.
func ValidID(s string) bool {
	if len(s) != len(idLayout)+1+8 || s[len(idLayout)] != '-' {
		return false
	}
	if _, err := time.Parse(idLayout, s[:len(idLayout)]); err != nil {
		return false
	}
	for _, c := range s[len(idLayout)+1:] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// validPrefix reports whether s can only name files inside the store: it is
// made of the characters ids are made of.
func validPrefix(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-') {
			return false
		}
	}
	return true
}

// resolve turns a command-line argument into the session it names in dir
// (see Store.Resolve): a full id, a unique prefix of one, or a path to a
// .jsonl file. Anything else that could name a file outside dir is
// refused.
func resolve(dir, arg string) (Ref, error) {
	if strings.HasSuffix(arg, Ext) {
		if strings.ContainsRune(arg, os.PathSeparator) || fileExists(arg) {
			st, err := os.Stat(arg)
			if err != nil {
				return Ref{}, fmt.Errorf("session: %w", err)
			}
			if !st.Mode().IsRegular() {
				return Ref{}, fmt.Errorf("session: %s is not a regular file", arg)
			}
			abs, err := filepath.Abs(arg)
			if err != nil {
				return Ref{}, err
			}
			return refOf(abs), nil
		}
		arg = strings.TrimSuffix(arg, Ext)
	}
	if !validPrefix(arg) {
		return Ref{}, fmt.Errorf("%w %q: an id is letters, digits and '-' (or give a path to a .jsonl file)", ErrInvalidID, arg)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return Ref{}, fmt.Errorf("%w: no session matches %q (no sessions in %s)", ErrNotFound, arg, dir)
		}
		return Ref{}, fmt.Errorf("session: %w", err)
	}
	var matches []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, Ext) || e.IsDir() {
			continue
		}
		id := idOf(name)
		if id == arg {
			return Ref{Dir: dir, ID: id}, nil
		}
		if strings.HasPrefix(id, arg) {
			matches = append(matches, id)
		}
	}
	switch len(matches) {
	case 0:
		return Ref{}, fmt.Errorf("%w: no session matches %q in %s", ErrNotFound, arg, dir)
	case 1:
		return Ref{Dir: dir, ID: matches[0]}, nil
	}
	sort.Sort(sort.Reverse(sort.StringSlice(matches)))
	return Ref{}, &AmbiguousError{Prefix: arg, Candidates: matches}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
