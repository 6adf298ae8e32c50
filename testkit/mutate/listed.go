package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// A listed mutant is written by hand, in a file of entries separated by
// blank lines ('#' starts a comment line):
//
//	why:  what the mutant breaks
//	file: engine/sandbox/sandbox.go
//	old:  "return s.Landlock >= 1"
//	new:  "return s.Landlock > 1"
//
// old and new are Go string literals; old must occur exactly once in the
// file. Every listed mutant must be killed by its package's tests.
type listed struct {
	why, file, old, new string
}

func readListed(r io.Reader) ([]listed, error) {
	var out []listed
	var cur listed
	n := 0
	flush := func() error {
		if cur == (listed{}) {
			return nil
		}
		if cur.file == "" || cur.old == "" {
			return fmt.Errorf("line %d: an entry needs file and old", n)
		}
		out = append(out, cur)
		cur = listed{}
		return nil
	}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") {
			continue
		}
		if line == "" {
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		key, val, ok := strings.Cut(line, ":")
		val = strings.TrimSpace(val)
		if !ok {
			return nil, fmt.Errorf("line %d: want key: value", n)
		}
		switch key {
		case "why":
			cur.why = val
		case "file":
			cur.file = val
		case "old", "new":
			s, err := strconv.Unquote(val)
			if err != nil {
				return nil, fmt.Errorf("line %d: %s is not a Go string: %v", n, key, err)
			}
			if key == "old" {
				cur.old = s
			} else {
				cur.new = s
			}
		default:
			return nil, fmt.Errorf("line %d: unknown key %q", n, key)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, flush()
}

// toMutant places a listed mutant in its file.
func (l listed) toMutant() (mutant, error) {
	abs, err := filepath.Abs(l.file)
	if err != nil {
		return mutant{}, err
	}
	src, err := os.ReadFile(abs)
	if err != nil {
		return mutant{}, err
	}
	if c := bytes.Count(src, []byte(l.old)); c != 1 {
		return mutant{}, fmt.Errorf("%s: %q occurs %d times, want once", l.file, l.old, c)
	}
	off := bytes.Index(src, []byte(l.old))
	line := 1 + bytes.Count(src[:off], []byte("\n"))
	col := off - bytes.LastIndexByte(src[:off], '\n')
	return mutant{File: abs, Off: off, End: off + len(l.old), New: l.new, Line: line, Col: col, Kind: "listed", Old: l.old}, nil
}

// runListed runs every listed mutant against its package's tests and
// reports whether all were killed.
func runListed(ctx context.Context, o options, path string, stdout io.Writer) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	ls, err := readListed(f)
	f.Close()
	if err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	timeout := o.timeout
	if timeout == 0 {
		timeout = 5 * time.Minute
	}
	killedAll, n := true, 0
	for i, l := range ls {
		m, err := l.toMutant()
		if err != nil {
			return false, err
		}
		pkg := "./" + filepath.ToSlash(filepath.Dir(l.file))
		r, err := runMutant(ctx, o, pkg, m, i, timeout)
		if err != nil {
			return false, err
		}
		by := ""
		if r.by != "" {
			by = " (" + r.by + ")"
		}
		fmt.Fprintf(stdout, "%-10s %s %s%s\n           %s\n", r.outcome, where(m), m, by, l.why)
		if r.outcome == killed {
			n++
		} else {
			killedAll = false
		}
	}
	fmt.Fprintf(stdout, "\n== listed mutants (%s): %d of %d killed\n", path, n, len(ls))
	return killedAll, nil
}
