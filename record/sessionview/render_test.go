package sessionview_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/record/pricing"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/sessionview"
	"github.com/mecha-agent/mecha/record/transcript"
)

// fixtures returns transcripts to render: the frozen v1 fixtures, the one
// the sessions show script uses, and generated ones of many shapes.
func fixtures(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob("../transcript/testdata/v1/*.jsonl")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no v1 fixtures: %v", err)
	}
	dir := t.TempDir()
	script, err := os.ReadFile("../../cli/root/testdata/script/sessions_show.txtar")
	if err != nil {
		t.Fatal(err)
	}
	_, s, ok := strings.Cut(string(script), "-- s.jsonl --\n")
	s, _, _ = strings.Cut(s, "-- show.golden --\n")
	if !ok {
		t.Fatal("no s.jsonl in sessions_show.txtar")
	}
	p := filepath.Join(dir, "show.jsonl")
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	paths = append(paths, p)
	for seed := range uint64(40) {
		p := filepath.Join(dir, "gen-"+string(rune('a'+seed%26))+string(rune('0'+seed/26))+".jsonl")
		generate(t, p, seed, genOptions{Exchanges: int(seed%7) * 6, ResultLen: []int{40, 700, 3000}[seed%3], Odd: seed%2 == 1, Plain: seed%4 == 2})
		paths = append(paths, p)
	}
	// Each under its header's id: the file name is the id, and a header
	// that disagrees is noted, which the old show did not do.
	for i, p := range paths {
		paths[i] = underHeaderID(t, dir, p)
	}
	return paths
}

// underHeaderID copies the transcript at path into dir named by its
// header's id (the path itself when it is already so named or has none).
func underHeaderID(t *testing.T, dir, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := bytes.Cut(b, []byte("\n"))
	m, err := transcript.DecodeMeta(first)
	if err != nil || !session.ValidID(m.ID) || session.FileID(path) == m.ID {
		return path
	}
	p := filepath.Join(dir, m.ID+session.Ext)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func prices() []pricing.Table {
	in, out, cr := 15.0, 75.0, 1.5
	return []pricing.Table{
		nil,
		{"anthropic": {"claude-opus-5": {Input: in, Output: out, CacheRead: &cr}}},
		{"anthropic": {"*": {Input: in, Output: out}}, "local": {"*": {}}, "openai": {"gpt-x": {Input: 1, Output: 2}}},
	}
}

// TestRenderersMatchTheOldShow holds WriteText and WriteJSON to what the
// command printed before it streamed, byte for byte.
func TestRenderersMatchTheOldShow(t *testing.T) {
	t.Parallel()
	for _, path := range fixtures(t) {
		for pi, table := range prices() {
			for _, mode := range []struct {
				json, full, color bool
			}{{json: true}, {}, {full: true}, {color: true}, {full: true, color: true}} {
				var want, got bytes.Buffer
				werr := sessionview.OracleShow(&want, path, table, mode.json, mode.full, mode.color)
				var gerr error
				if mode.json {
					gerr = sessionview.WriteJSON(&got, path, table)
				} else {
					gerr = sessionview.WriteText(&got, path, table, sessionview.TextOptions{Full: mode.full, Color: mode.color})
				}
				if (werr == nil) != (gerr == nil) {
					t.Fatalf("%s %+v prices %d: error %v, want %v", filepath.Base(path), mode, pi, gerr, werr)
				}
				if werr != nil {
					continue
				}
				if !bytes.Equal(got.Bytes(), want.Bytes()) {
					t.Fatalf("%s %+v prices %d: output differs at byte %d:\n got: %q\nwant: %q", filepath.Base(path), mode, pi,
						firstDiff(got.Bytes(), want.Bytes()), around(got.Bytes(), want.Bytes()), around(want.Bytes(), got.Bytes()))
				}
			}
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func around(a, b []byte) string {
	i := firstDiff(a, b)
	lo, hi := max(0, i-200), min(len(a), i+200)
	return string(a[lo:hi])
}
