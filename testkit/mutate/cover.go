package main

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
)

// block is a run of statements of a coverage profile, from line.col to
// line.col, and whether the tests ran it.
type block struct {
	l0, c0, l1, c1 int
	ran            bool
}

// coverage is the blocks of a coverage profile by file name (the base
// name: a package's files are in one directory).
type coverage map[string][]block

// parseCoverage reads a profile written by go test -coverprofile:
//
//	mode: set
//	example.com/m/pkg/file.go:12.34,15.2 3 1
func parseCoverage(r io.Reader) (coverage, error) {
	c := coverage{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "mode:") || line == "" {
			continue
		}
		colon := strings.LastIndex(line, ":")
		fields := strings.Fields(line[colon+1:])
		if colon < 0 || len(fields) != 3 {
			return nil, fmt.Errorf("coverage profile: bad line %q", line)
		}
		var b block
		if _, err := fmt.Sscanf(fields[0], "%d.%d,%d.%d", &b.l0, &b.c0, &b.l1, &b.c1); err != nil {
			return nil, fmt.Errorf("coverage profile: bad line %q: %v", line, err)
		}
		count, err := strconv.Atoi(fields[2])
		if err != nil {
			return nil, fmt.Errorf("coverage profile: bad line %q: %v", line, err)
		}
		b.ran = count > 0
		name := path.Base(line[:colon])
		c[name] = append(c[name], b)
	}
	return c, sc.Err()
}

// covered reports whether the tests ran the code at line:col of the file
// with base name name.
func (c coverage) covered(name string, line, col int) bool {
	for _, b := range c[name] {
		after := line > b.l0 || line == b.l0 && col >= b.c0
		before := line < b.l1 || line == b.l1 && col < b.c1
		if b.ran && after && before {
			return true
		}
	}
	return false
}
