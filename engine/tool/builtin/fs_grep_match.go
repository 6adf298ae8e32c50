package builtin

import (
	"bytes"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// lineMatcher is a compiled fs_grep pattern.
type lineMatcher struct {
	// re matches with (?m): ^ and $ at line boundaries, so a whole block
	// of lines is searched at once and only the lines found are looked at.
	re *regexp.Regexp
	// perLine is set when the pattern has \A or \z, which mean the start
	// and end of the text searched: every line is then matched alone.
	perLine bool
	// pre, when set, is a literal every match contains: a block is
	// searched for it (a byte search, much faster than the regexp's), and
	// only the lines that hold it are matched, each alone.
	pre *prefilter
}

func newLineMatcher(pattern string, ignoreCase bool) (*lineMatcher, error) {
	flags := "(?m)"
	if ignoreCase {
		flags = "(?mi)"
	}
	re, err := regexp.Compile(flags + pattern)
	if err != nil {
		return nil, strippedRegexpError(err)
	}
	tree, err := syntax.Parse(flags+pattern, syntax.Perl)
	if err != nil {
		return nil, err
	}
	tree = tree.Simplify()
	return &lineMatcher{re: re, perLine: hasTextAnchor(tree), pre: newPrefilter(requiredLiteral(tree))}, nil
}

// strippedRegexpError drops the "error parsing regexp: " prefix and the
// flags fs_grep added.
func strippedRegexpError(err error) error {
	if se, ok := err.(*syntax.Error); ok {
		return fmt.Errorf("%s: `%s`", se.Code, strings.TrimPrefix(strings.TrimPrefix(se.Expr, "(?mi)"), "(?m)"))
	}
	return err
}

func hasTextAnchor(re *syntax.Regexp) bool {
	if re.Op == syntax.OpBeginText || re.Op == syntax.OpEndText {
		return true
	}
	for _, s := range re.Sub {
		if hasTextAnchor(s) {
			return true
		}
	}
	return false
}

// requiredLiteral returns the longest literal that every match of re
// contains, as far as its syntax shows it (a literal, or one in a
// concatenation, a group or a repetition of at least one); "" when none
// does (an alternation, a class). fold is whether it matches
// case-insensitively.
func requiredLiteral(re *syntax.Regexp) (lit string, fold bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return string(re.Rune), re.Flags&syntax.FoldCase != 0
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		for _, s := range re.Sub {
			if l, f := requiredLiteral(s); len(l) > len(lit) {
				lit, fold = l, f
			}
		}
	}
	return lit, fold
}

// prefilter finds a literal in a block of lines.
type prefilter struct {
	lit  []byte
	fold bool // ASCII case-insensitively: lit is lower case
	// wide: lit has a k or an s, which (?i) also matches as U+212A
	// (KELVIN SIGN) and U+017F (LATIN SMALL LETTER LONG S); a block that
	// holds either is searched by the regexp instead.
	wide bool
}

// newPrefilter returns the prefilter of a literal; nil for none, and for
// a case-insensitive literal that is not ASCII (its folds are not a byte
// search).
func newPrefilter(lit string, fold bool) *prefilter {
	if lit == "" || fold && !isASCII(lit) {
		return nil
	}
	if !fold {
		return &prefilter{lit: []byte(lit)}
	}
	lit = strings.ToLower(lit)
	return &prefilter{lit: []byte(lit), fold: true, wide: strings.ContainsAny(lit, "ks")}
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

var (
	kelvin = []byte("\u212a")
	longS  = []byte("\u017f")
)

// finder returns where the literal next occurs in block from a position
// on (-1: nowhere), or nil when the block must be searched by the
// regexp. lower is a buffer for the block in lower case, returned for
// reuse.
func (p *prefilter) finder(block, lower []byte) (find func(from int) int, _ []byte) {
	if p == nil || p.wide && (bytes.Contains(block, kelvin) || bytes.Contains(block, longS)) {
		return nil, lower
	}
	in := block
	if p.fold {
		lower = asciiLower(lower, block)
		in = lower
	}
	return func(from int) int {
		if i := bytes.Index(in[from:], p.lit); i >= 0 {
			return from + i
		}
		return -1
	}, lower
}

// asciiLower returns src with A-Z made a-z, in dst's memory when it is
// large enough; every other byte is kept, so offsets are the same.
func asciiLower(dst, src []byte) []byte {
	if cap(dst) < len(src) {
		dst = make([]byte, len(src))
	}
	dst = dst[:len(src)]
	for i, c := range src {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst[i] = c
	}
	return dst
}
