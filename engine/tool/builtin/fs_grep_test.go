package builtin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// searchTree is the workspace the search tools' tests search: files that
// match "Alpha" in every way a search must skip or keep.
var searchTree = map[string]string{
	".gitignore":     "ignored/\n*.log\n!keep.log\n# a comment\n\n",
	".git/config":    "Alpha in git\n",
	"a.go":           "package a\nfunc Alpha() {}\n// alpha beta\n",
	"b/c.txt":        "one\ntwo Alpha\nthree\n",
	"b/d/e.md":       "Alpha at the start\n",
	"bin.dat":        "Alpha\x00binary\n",
	"crlf.txt":       "Alpha crlf\r\nnext\r\n",
	"ignored/x.go":   "Alpha inside ignored\n",
	"keep.log":       "Alpha kept\n",
	"x.log":          "Alpha log\n",
	"sub/.gitignore": "local.txt\n",
	"sub/local.txt":  "Alpha local\n",
	"sub/other.txt":  "Alpha other",
}

// searchWorkspace returns a workspace holding searchTree and a symbolic
// link, link.txt, to a.go.
func searchWorkspace(t *testing.T) (Workspace, string) {
	t.Helper()
	ws, root := testWorkspace(t)
	writeFiles(t, root, searchTree)
	symlink(t, "a.go", filepath.Join(root, "link.txt"))
	return ws, root
}

func TestFSGrep(t *testing.T) {
	t.Parallel()
	const all = "a.go:2:func Alpha() {}\nb/c.txt:2:two Alpha\nb/d/e.md:1:Alpha at the start\ncrlf.txt:1:Alpha crlf\nkeep.log:1:Alpha kept\nsub/other.txt:1:Alpha other\n"
	tests := []struct {
		name    string
		input   string
		max     int // MaxResultBytes
		want    string
		wantErr bool
	}{
		{name: "everywhere", input: `{"pattern":"Alpha"}`, want: all + "[6 matching lines in 6 files; 1 binary file skipped]"},
		{name: "ignore case", input: `{"pattern":"alpha","ignore_case":true}`,
			want: "a.go:2:func Alpha() {}\na.go:3:// alpha beta\n" + all[len("a.go:2:func Alpha() {}\n"):] + "[7 matching lines in 6 files; 1 binary file skipped]"},
		{name: "case matters", input: `{"pattern":"alpha"}`, want: "a.go:3:// alpha beta\n[1 matching line in 1 file; 1 binary file skipped]"},
		{name: "line start", input: `{"pattern":"^Alpha"}`, want: "b/d/e.md:1:Alpha at the start\ncrlf.txt:1:Alpha crlf\nkeep.log:1:Alpha kept\nsub/other.txt:1:Alpha other\n[4 matching lines in 4 files; 1 binary file skipped]"},
		{name: "text anchors are line anchors", input: `{"pattern":"\\Aone$|\\Athree\\z","path":"b"}`, want: "b/c.txt:1:one\nb/c.txt:3:three\n[2 matching lines in 1 file]"},
		{name: "line end", input: `{"pattern":"start$|^three$"}`, want: "b/c.txt:3:three\nb/d/e.md:1:Alpha at the start\n[2 matching lines in 2 files; 1 binary file skipped]"},
		{name: "never across lines", input: `{"pattern":"one\\ntwo|one\\s+two"}`, want: "[no matches; 1 binary file skipped]"},
		{name: "a match running on is tried alone", input: `{"pattern":"two Alpha\\s+three|Alpha$","path":"b"}`, want: "b/c.txt:2:two Alpha\n[1 matching line in 1 file]"},
		{name: "empty matches", input: `{"pattern":"x*","path":"b/c.txt"}`, want: "b/c.txt:1:one\nb/c.txt:2:two Alpha\nb/c.txt:3:three\n[3 matching lines in 1 file]"},
		{name: "directory", input: `{"pattern":"Alpha","path":"b"}`, want: "b/c.txt:2:two Alpha\nb/d/e.md:1:Alpha at the start\n[2 matching lines in 2 files]"},
		{name: "directory absolute", input: `{"pattern":"Alpha","path":"ROOT/b/"}`, want: "b/c.txt:2:two Alpha\nb/d/e.md:1:Alpha at the start\n[2 matching lines in 2 files]"},
		{name: "one file", input: `{"pattern":"Alpha|three","path":"b/c.txt"}`, want: "b/c.txt:2:two Alpha\nb/c.txt:3:three\n[2 matching lines in 1 file]"},
		{name: "ignored directory named", input: `{"pattern":"Alpha","path":"ignored"}`, want: "ignored/x.go:1:Alpha inside ignored\n[1 matching line in 1 file]"},
		{name: "ignored file named", input: `{"pattern":"Alpha","path":"x.log"}`, want: "x.log:1:Alpha log\n[1 matching line in 1 file]"},
		{name: "nested ignore file", input: `{"pattern":"Alpha","path":"sub"}`, want: "sub/other.txt:1:Alpha other\n[1 matching line in 1 file]"},
		{name: "file named through a link", input: `{"pattern":"Alpha","path":"link.txt"}`, want: "link.txt:2:func Alpha() {}\n[1 matching line in 1 file]"},
		{name: "binary file named", input: `{"pattern":"Alpha","path":"bin.dat"}`, want: "[no matches; 1 binary file skipped]"},
		{name: "glob on names", input: `{"pattern":"Alpha","glob":"*.md"}`, want: "b/d/e.md:1:Alpha at the start\n[1 matching line in 1 file]"},
		{name: "glob on paths", input: `{"pattern":"Alpha","glob":"**/*.txt"}`, want: "b/c.txt:2:two Alpha\ncrlf.txt:1:Alpha crlf\nsub/other.txt:1:Alpha other\n[3 matching lines in 3 files]"},
		{name: "glob from path", input: `{"pattern":"Alpha","path":"b","glob":"d/*"}`, want: "b/d/e.md:1:Alpha at the start\n[1 matching line in 1 file]"},
		{name: "glob with braces", input: `{"pattern":"Alpha","glob":"*.{go,log}"}`, want: "a.go:2:func Alpha() {}\nkeep.log:1:Alpha kept\n[2 matching lines in 2 files]"},
		{name: "max matches", input: `{"pattern":"Alpha","max_matches":2}`,
			want: "a.go:2:func Alpha() {}\nb/c.txt:2:two Alpha\n[2 matching lines in 2 files; stopped at max_matches=2, there are more: narrow the pattern, path or glob]"},
		{name: "max matches inside a file", input: `{"pattern":"e","path":"b/c.txt","max_matches":1}`,
			want: "b/c.txt:1:one\n[1 matching line in 1 file; stopped at max_matches=1, there are more: narrow the pattern, path or glob]"},
		{name: "max matches met exactly", input: `{"pattern":"Alpha","max_matches":6}`, want: all + "[6 matching lines in 6 files; 1 binary file skipped]"},
		{name: "byte limit", input: `{"pattern":"Alpha"}`, max: 60,
			want: "a.go:2:func Alpha() {}\nb/c.txt:2:two Alpha\n[2 matching lines in 2 files; stopped at the 60-byte output limit, there are more: narrow the pattern, path or glob]"},
		{name: "no match", input: `{"pattern":"zzz","path":"b"}`, want: "[no matches]"},

		{name: "missing pattern", input: `{"path":"b"}`, want: `invalid input: missing required field "pattern"`, wantErr: true},
		{name: "bad pattern", input: `{"pattern":"a("}`, want: "invalid input: pattern: missing closing ): `a(`", wantErr: true},
		{name: "backreference", input: `{"pattern":"(a)\\1"}`, want: "invalid input: pattern: invalid escape sequence: `\\1`", wantErr: true},
		{name: "bad glob", input: `{"pattern":"a","glob":"[a"}`, want: `invalid input: glob "[a" is not a valid pattern`, wantErr: true},
		{name: "max matches zero", input: `{"pattern":"a","max_matches":0}`, want: "invalid input: max_matches must be between 1 and 1000, got 0", wantErr: true},
		{name: "max matches too many", input: `{"pattern":"a","max_matches":1001}`, want: "invalid input: max_matches must be between 1 and 1000, got 1001", wantErr: true},
		{name: "missing path", input: `{"pattern":"a","path":"nope"}`, want: "nope: no such file or directory", wantErr: true},
		{name: "outside", input: `{"pattern":"a","path":"../x"}`, want: `path "../x" is outside the workspace`, wantErr: true},
		{name: "unknown field", input: `{"pattern":"a","context":2}`, want: `invalid input: unknown field "context" (accepted fields: pattern, path, glob, ignore_case, max_matches)`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws, root := searchWorkspace(t)
			res := run(t, NewFSGrep(ws, Options{MaxResultBytes: tt.max}), strings.ReplaceAll(tt.input, "ROOT", root))
			if res.IsError != tt.wantErr || res.Content != tt.want {
				t.Errorf("result = %+v\nwant IsError=%v %q", res, tt.wantErr, tt.want)
			}
		})
	}
}

// TestFSGrepLargeFiles: files larger than a block, lines longer than one,
// and a NUL byte far into a file.
func TestFSGrepLargeFiles(t *testing.T) {
	t.Parallel()
	ws, root := testWorkspace(t)
	var many strings.Builder
	for i := 1; i <= 50000; i++ { // about 600 KB: three blocks
		fmt.Fprintf(&many, "line %d\n", i)
	}
	long := strings.Repeat("x", 2000) + "NEEDLE" + strings.Repeat("y", 2000)
	huge := strings.Repeat("z", grepBlock+1000) // longer than the first block
	writeFiles(t, root, map[string]string{
		"many.txt":  many.String(),
		"long.txt":  "first\n" + long + "\nlast NEEDLE\n",
		"huge.txt":  "a\n" + huge + "NEEDLE\nb NEEDLE\n",
		"late.bin":  many.String() + "NEEDLE\x00",
		"lines.txt": "line 1\n",
	})
	tests := []struct{ name, input, want string }{
		{"line numbers across blocks", `{"pattern":"^line (1|25000|50000)$","path":"many.txt"}`,
			"many.txt:1:line 1\nmany.txt:25000:line 25000\nmany.txt:50000:line 50000\n[3 matching lines in 1 file]"},
		{"a long line is cut around the match", `{"pattern":"NEEDLE","path":"long.txt"}`,
			"long.txt:2:" + long[1900:2400] + " [... line cut: bytes 1900-2400 of 4006 shown]\nlong.txt:3:last NEEDLE\n[2 matching lines in 1 file]"},
		{"a line longer than a block", `{"pattern":"NEEDLE","path":"huge.txt"}`,
			fmt.Sprintf("huge.txt:2:%s [... line cut: bytes %d-%d of %d shown]\nhuge.txt:3:b NEEDLE\n[2 matching lines in 1 file]",
				(huge + "NEEDLE")[len(huge)+6-500:], len(huge)+6-500, len(huge)+6, len(huge)+6)},
		{"a NUL past the first block", `{"pattern":"line 1$"}`, "lines.txt:1:line 1\nmany.txt:1:line 1\n[2 matching lines in 2 files; 1 binary file skipped]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := run(t, NewFSGrep(ws, Options{}), tt.input)
			if res.IsError || res.Content != tt.want {
				t.Errorf("result = %+v\nwant %q", res, tt.want)
			}
		})
	}
}

// TestFSGrepRedacts: a secret is redacted before the search, so a result
// never shows it, not even in part where a long line is cut, and a
// pattern cannot probe for it. The control, without Secrets, shows what
// each would leak.
func TestFSGrepRedacts(t *testing.T) {
	t.Parallel()
	ws, root := testWorkspace(t)
	writeFiles(t, root, map[string]string{
		"env":      "DB_PASS=" + cutCanary + "\n",
		"long.txt": strings.Repeat("a", 480) + cutCanary + strings.Repeat("b", 1000) + "\n", // the cut at 500 bytes falls inside it
	})
	tests := []struct{ name, input string }{
		{"the line shown", `{"pattern":"DB_PASS="}`},
		{"a probe", `{"pattern":"DB_PASS=CANARY-c"}`},
		{"a long line cut", `{"pattern":"^a","path":"long.txt"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			control := run(t, NewFSGrep(ws, Options{}), tt.input).Content
			if fragment(control, cutCanary) == "" {
				t.Fatalf("control: no part of the canary shows: %q", control)
			}
			got := run(t, NewFSGrep(ws, Options{Secrets: cutSecrets}), tt.input).Content
			if f := fragment(got, cutCanary); f != "" {
				t.Errorf("%q of the canary shows: %q", f, got)
			}
		})
	}
	got := run(t, NewFSGrep(ws, Options{Secrets: cutSecrets}), `{"pattern":"DB_PASS="}`).Content
	if want := "env:1:DB_PASS=[redacted DB_PASS]\n[1 matching line in 1 file]"; got != want {
		t.Errorf("result = %q, want %q", got, want)
	}
}

// TestFSGrepUnreadable: what cannot be read is named in the last line.
func TestFSGrepUnreadable(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root reads anything")
	}
	ws, root := testWorkspace(t)
	writeFiles(t, root, map[string]string{"locked/x": "Alpha\n", "secret.txt": "Alpha\n", "z.txt": "Alpha\n"})
	for _, p := range []string{"locked", "secret.txt"} {
		if err := os.Chmod(filepath.Join(root, p), 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(filepath.Join(root, p), 0o755) })
	}
	res := run(t, NewFSGrep(ws, Options{}), `{"pattern":"Alpha"}`)
	want := "z.txt:1:Alpha\n[1 matching line in 1 file; could not read locked/ (permission denied), secret.txt (permission denied)]"
	if res.IsError || res.Content != want {
		t.Errorf("result = %+v, want %q", res, want)
	}
}

func TestRequiredLiteral(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern string
		lit     string // as the prefilter searches it; "" for none
	}{
		{"func New", "func New"},
		{`Redact(or|Writer)\b`, "Redact"},
		{`zq[0-9]xv`, "zq"},
		{`[A-Z]\w+Error`, "Error"},
		{`(?i)Check ME`, "check me"},
		{`(ab)+c`, "ab"},
		{`x{2,}`, "x"},
		{`(?:abc)?d`, "d"},
		{`foo|bar`, ""},
		{`a*`, ""},
		{`(?i)straße`, ""}, // not ASCII: its folds are no byte search
		{`(?i:ab)CDE`, "CDE"},
	}
	for _, tt := range tests {
		m, err := newLineMatcher(tt.pattern, false)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if m.pre != nil {
			got = string(m.pre.lit)
		}
		if got != tt.lit {
			t.Errorf("%s: literal %q, want %q", tt.pattern, got, tt.lit)
		}
	}
}

// TestFSGrepFolds: a case-insensitive search finds what Go's (?i) matches,
// the prefilter's ASCII lower case notwithstanding: the Kelvin sign and
// the long s for k and s, and non-ASCII letters.
func TestFSGrepFolds(t *testing.T) {
	t.Parallel()
	ws, root := testWorkspace(t)
	writeFiles(t, root, map[string]string{
		"a.txt": "plain\nKELVIN\n\u212aelvin\nMi\u017f\u017f\nSTRASSE\nSTRAẞE\nstraße\nCheck Me\n",
	})
	tests := []struct{ pattern, want string }{
		{"kelvin", "a.txt:2:KELVIN\na.txt:3:\u212aelvin\n[2 matching lines in 1 file]"},
		{"miss", "a.txt:4:Mi\u017f\u017f\n[1 matching line in 1 file]"},
		{"straße", "a.txt:6:STRAẞE\na.txt:7:straße\n[2 matching lines in 1 file]"},
		{"check me|plain", "a.txt:1:plain\na.txt:8:Check Me\n[2 matching lines in 1 file]"},
		{"^che.k", "a.txt:8:Check Me\n[1 matching line in 1 file]"},
	}
	for _, tt := range tests {
		res := run(t, NewFSGrep(ws, Options{}), mustJSON(t, map[string]any{"pattern": tt.pattern, "ignore_case": true}))
		if res.IsError || res.Content != tt.want {
			t.Errorf("%s: %q, want %q", tt.pattern, res.Content, tt.want)
		}
	}
}

// TestFSGrepStopsAndCloses: a search that fills its output early stops
// the walk, and leaves no file open and no goroutine running; so does a
// cancelled one. The result is the same in the walk's order whatever the
// number of searchers.
func TestFSGrepStopsAndCloses(t *testing.T) {
	ws, root := testWorkspace(t)
	files := map[string]string{}
	for i := range 400 {
		files[fmt.Sprintf("d%d/f%03d.txt", i%4, i)] = "x\nmatch\n"
	}
	writeFiles(t, root, files)
	fds := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc/self/fd")
		}
		return len(ents)
	}
	settled := func(what string, fd, g int) {
		t.Helper()
		for range 100 {
			if fds() <= fd && runtime.NumGoroutine() <= g {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Errorf("%s: %d descriptors open (was %d), %d goroutines (was %d)", what, fds(), fd, runtime.NumGoroutine(), g)
	}
	fd, g := fds(), runtime.NumGoroutine()
	tl := NewFSGrep(ws, Options{})
	res := run(t, tl, `{"pattern":"match","max_matches":3}`)
	want := "d0/f000.txt:2:match\nd0/f004.txt:2:match\nd0/f008.txt:2:match\n[3 matching lines in 3 files; stopped at max_matches=3, there are more: narrow the pattern, path or glob]"
	if res.Content != want {
		t.Errorf("result = %q, want %q", res.Content, want)
	}
	settled("stopped", fd, g)

	all := run(t, tl, `{"pattern":"match","max_matches":1000}`).Content
	for _, procs := range []int{1, 3} {
		prev := runtime.GOMAXPROCS(procs)
		got := run(t, tl, `{"pattern":"match","max_matches":1000}`).Content
		runtime.GOMAXPROCS(prev)
		if got != all {
			t.Errorf("with %d searchers the result differs", procs)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(time.Millisecond); cancel() }()
	_, err := tl.Run(ctx, []byte(`{"pattern":"nothing here"}`))
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	settled("cancelled", fd, g)
}
