package sessionindex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

var words = []string{"alpha", "beta", "gamma", "delta", "needle", "Needle", "haystack", "été", "naïve", "go build", "x<y", "a\"b", "path/to/file.go", "TODO", "ok"}

func sentence(r *rand.Rand) string {
	n := 1 + r.IntN(8)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = words[r.IntN(len(words))]
	}
	return strings.Join(parts, " ")
}

func encode(t testing.TB, recs ...transcript.Record) []byte {
	var out []byte
	for _, rec := range recs {
		b, err := transcript.Encode(rec)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b...)
	}
	return out
}

// runBody is one run of a session: messages, tool calls, a summary.
func runBody(t testing.TB, r *rand.Rand, n int, withTurns bool, turnsSoFar *int) []byte {
	var recs []transcript.Record
	recs = append(recs, &transcript.Message{Role: transcript.RoleUser, Content: []transcript.Block{transcript.TextBlock(sentence(r))}})
	turns := 1 + r.IntN(4)
	for i := range turns {
		id := fmt.Sprintf("toolu_%d_%d_%d", n, *turnsSoFar, i) // unique in the session
		tool := []string{"fs_read", "shell", "fs_grep"}[r.IntN(3)]
		in, _ := json.Marshal(map[string]any{"path": sentence(r), "n": i, "args": []string{sentence(r)}})
		recs = append(recs, &transcript.Message{Role: transcript.RoleAssistant, Content: []transcript.Block{
			{Type: transcript.BlockThinking, Thinking: sentence(r)}, transcript.TextBlock(sentence(r)), transcript.ToolUseBlock(id, tool, in)}})
		recs = append(recs, &transcript.Message{Role: transcript.RoleUser, Content: []transcript.Block{transcript.ToolResultBlock(id, sentence(r), false)}})
	}
	if r.IntN(4) == 0 {
		recs = append(recs, &transcript.Compaction{Summary: sentence(r), Replaces: 2})
	}
	if r.IntN(4) == 0 {
		args, _ := json.Marshal(map[string]string{"q": sentence(r)})
		content, _ := json.Marshal([]map[string]string{{"type": "text", "text": sentence(r)}})
		recs = append(recs, &transcript.ToolCall{ID: json.RawMessage(`1`), Tool: "mcp_search", Arguments: args, Content: content})
	}
	sum := &transcript.Summary{Usage: transcript.Usage{InputTokens: uint64(r.IntN(5000)), OutputTokens: uint64(r.IntN(900)), CacheReadTokens: uint64(r.IntN(50))},
		Turns: turns, StopReason: []string{"end_turn", "max_turns", "error"}[r.IntN(3)]}
	if r.IntN(3) == 0 {
		sum.Provider, sum.Model = "openai", "gpt-9"
	}
	*turnsSoFar += turns
	if withTurns {
		st := *turnsSoFar
		sum.SessionTurns = &st
	}
	recs = append(recs, sum)
	return encode(t, recs...)
}

// aged makes the store's index directory (as an earlier indexing left it)
// and sets the store directory's mtime an hour back, as a store's usually
// is, so that a snapshot records it; it returns that time.
func aged(dir string) time.Time {
	os.MkdirAll(filepath.Join(dir, ".index"), 0o700)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(dir, old, old)
	return old
}

// genStore writes n sessions into dir: some with session_turns, some
// without, some with several runs, children, torn tails, files that are
// not sessions.
func genStore(t testing.TB, dir string, r *rand.Rand, n int) []string {
	os.MkdirAll(dir, 0o700)
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var ids []string
	for i := range n {
		at := base.Add(time.Duration(r.IntN(1000)) * time.Minute)
		id := fmt.Sprintf("%s-%08x", at.Format("20060102T150405"), i)
		m := &transcript.Meta{Format: 1, ID: id, CreatedAt: at, Provider: "anthropic", Model: "claude-x", Workspace: "/w/" + words[r.IntN(3)], Title: sentence(r)}
		switch r.IntN(8) {
		case 0:
			if len(ids) > 0 {
				m.Parent = &transcript.ParentCall{Session: ids[r.IntN(len(ids))], CallID: "toolu_1"}
			}
		case 1:
			m.ReplayOf = "x"
		case 2:
			m.ImportedFrom = &transcript.ImportedFrom{Harness: "codex", Path: "/tmp/x"}
		case 3:
			m.ID = "claims-another" // the file name wins
		case 4:
			// Written in another zone: listed as written.
			m.CreatedAt = at.In(time.FixedZone("", 2*60*60))
		case 5:
			// A session served to an MCP client (mecha mcp serve/proxy):
			// a header field the index keeps only in the header itself.
			m.MCPClient = &transcript.MCPPeer{Name: "claude-code", Version: "2.1.0", ProtocolVersion: "2025-06-18"}
		case 6:
			// A session mecha rewind forked from another.
			if len(ids) > 0 {
				m.ForkOf = &transcript.Fork{Session: ids[len(ids)-1], Turn: 2}
			}
		}
		data := encode(t, m)
		turns := 0
		withTurns := r.IntN(2) == 0
		for range 1 + r.IntN(3) {
			data = append(data, runBody(t, r, i, withTurns, &turns)...)
		}
		switch r.IntN(6) {
		case 0:
			data = append(data, `{"record":"message","role":"user","content":[{"type":"text","text":"needle torn`...)
		case 1:
			data = append(data, "\n\n"...)
		}
		if err := os.WriteFile(filepath.Join(dir, id+session.Ext), data, 0o600); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	os.WriteFile(filepath.Join(dir, "notes.jsonl"), []byte("{\"record\":\"message\"}\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "empty.jsonl"), nil, 0o600)
	return ids
}

// checkOracle compares every reading of the index with the full scan.
func checkOracle(t *testing.T, dir string, ix *Index) {
	t.Helper()
	scan := &session.Store{Dir: dir}
	idx := &session.Store{Dir: dir, Index: ix}
	wl, err1 := scan.List()
	gl, err2 := idx.List()
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if !reflect.DeepEqual(infos(gl.Sessions), infos(wl.Sessions)) {
		t.Errorf("list differs:\nindex %v\nscan  %v", infos(gl.Sessions), infos(wl.Sessions))
	}
	if a, b := fileErrs(gl.NotSessions), fileErrs(wl.NotSessions); !reflect.DeepEqual(a, b) {
		t.Errorf("skipped differ: index %v scan %v", a, b)
	}
	keeps := map[string]func(transcript.Meta) bool{"all": nil, "replays": func(m transcript.Meta) bool { return session.Kind(&m) == session.KindReplay }}
	for name, keep := range keeps {
		for _, limit := range []int{0, 3} {
			wt, ws, _ := scan.Totals(keep, limit)
			gt, gs, _ := idx.Totals(keep, limit)
			if a, b := totalsOf(gt), totalsOf(wt); !reflect.DeepEqual(a, b) {
				t.Errorf("totals %s -n %d differ:\nindex %v\nscan  %v", name, limit, a, b)
			}
			if a, b := fileErrs(gs), fileErrs(ws); !reflect.DeepEqual(a, b) {
				t.Errorf("totals skipped differ: %v %v", a, b)
			}
		}
		ws, _, _ := scan.Summaries(keep)
		gs, _, _ := idx.Summaries(keep)
		if a, b := sums(t, gs), sums(t, ws); a != b {
			t.Errorf("summaries %s differ:\nindex %s\nscan  %s", name, a, b)
		}
	}
	for _, s := range wl.Sessions {
		wc, _ := scan.Children(s.Ref)
		gc, _ := idx.Children(s.Ref)
		if !reflect.DeepEqual(infos(gc), infos(wc)) {
			t.Errorf("children of %s differ: %v %v", s.Ref.ID, infos(gc), infos(wc))
		}
	}
	for _, qs := range []struct {
		q           string
		regex       bool
		role, tool  string
		wantNarrows bool
	}{
		{"needle", false, "", "", true}, {"Needle", false, "", "", true}, {"go build", false, "", "", true}, {"été", false, "", "", true},
		{"x<y", false, "", "", true}, {`a"b`, false, "", "", true}, {"ok", false, "", "", false}, {"haystack", false, "tool", "", true},
		{"alpha", false, "", "shell", true}, {"beta", false, "assistant", "", true}, {"delta", false, "user", "", true},
		{"TODO", false, "", "mcp_search", true}, {`nee+dle\s+\w+`, true, "", "", true}, {`(?i)NEEDLE`, true, "", "", false},
		{`gamma|delta`, true, "", "", false}, {`path/to/\w+\.go`, true, "tool", "", true}, {"torn", false, "", "", true},
	} {
		var q *session.Query
		if qs.regex {
			q, _ = session.NewRegexQuery(qs.q)
		} else {
			q = session.NewLiteralQuery(qs.q)
		}
		q.Role, q.Tool = qs.role, qs.tool
		want := searchAll(t, scan, wl.Sessions, q, nil)
		n, narrowed, err := idx.Candidates(q)
		if err != nil || narrowed != qs.wantNarrows {
			t.Errorf("%q: candidates narrowed=%v err=%v", qs.q, narrowed, err)
		}
		if !narrowed {
			continue
		}
		if a, b := fileErrs(n.NotSessions), fileErrs(wl.NotSessions); !reflect.DeepEqual(a, b) {
			t.Errorf("search %q passes over %v, the scan %v", qs.q, a, b)
		}
		// The sessions it names are the listing's, in its order.
		var named []session.Info
		for _, s := range gl.Sessions {
			if _, ok := n.Lines[s.Ref.ID]; ok {
				named = append(named, s)
			}
		}
		if !reflect.DeepEqual(infos(n.Sessions), infos(named)) {
			t.Errorf("search %q: sessions %v, want %v", qs.q, infos(n.Sessions), infos(named))
		}
		got := searchAll(t, idx, n.Sessions, q, n.Lines)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("search %q (role %q tool %q) differs: index %d hits, scan %d; only in index %v; only in scan %v", qs.q, qs.role, qs.tool, len(got), len(want), minus(got, want), minus(want, got))
		}
	}
}

func searchAll(t *testing.T, st *session.Store, list []session.Info, q *session.Query, cands map[string][]session.Span) []string {
	var out []string
	for _, s := range list {
		var hits []string
		fn := func(h session.Hit) bool {
			hits = append(hits, fmt.Sprintf("%s:%d:%s:%s:%s:%q[%d:%d]", s.Ref.ID, h.Line, h.Role, h.Tool, h.Part, h.Text, h.Start, h.End))
			return true
		}
		var err error
		if cands != nil {
			err = st.SearchLines(s.Ref, q, cands[s.Ref.ID], fn)
		} else {
			err = st.Search(s.Ref, q, fn)
		}
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(hits) // a tool input's values come in map order
		out = append(out, hits...)
	}
	return out
}

type infoKey struct {
	ID, HeaderID, Meta string
}

func infos(l []session.Info) []infoKey {
	var out []infoKey
	for _, s := range l {
		b, _ := json.Marshal(s.Meta) // created_at as written, its zone too
		out = append(out, infoKey{s.Ref.ID, s.HeaderID, string(b)})
	}
	return out
}

func fileErrs(l []*session.FileError) []string {
	var out []string
	for _, e := range l {
		out = append(out, e.Path+": "+e.Reason())
	}
	sort.Strings(out)
	return out
}

func totalsOf(l []session.Totals) []string {
	var out []string
	for _, s := range l {
		out = append(out, fmt.Sprintf("%s turns=%d stop=%q finished=%v err=%v", s.Ref.ID, s.Turns, s.Stop, s.Finished, s.Err))
	}
	return out
}

func sums(t *testing.T, l []session.Summarized) string {
	var b strings.Builder
	for _, s := range l {
		fmt.Fprintf(&b, "%s err=%v:", s.Ref.ID, s.Err)
		for _, x := range s.Summaries {
			j, _ := json.Marshal(x)
			b.Write(j)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func TestOracle(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			dir := t.TempDir()
			r := rand.New(rand.NewPCG(seed, 7))
			ids := genStore(t, dir, r, 60)
			// A directory last changed a while ago, as a store usually is:
			// the snapshot records it, and the readers after check the
			// files it lists without reading the directory.
			old := aged(dir)
			ix := &Index{dir: dir, path: filepath.Join(dir, Name)}
			checkOracle(t, dir, ix)
			if snap := ix.readSnapshot(readEntries, 0); snap == nil || snap.dirMtime == 0 {
				t.Fatal("the snapshot does not record the directory")
			}
			// Appended-to sessions, a completed torn line and a record not
			// yet ended by its newline, which leave the directory as it
			// was; then deleted files.
			for i, id := range ids {
				path := filepath.Join(dir, id+session.Ext)
				switch i % 5 {
				case 0:
					f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
					turns := 100
					f.Write([]byte("\n"))
					f.Write(runBody(t, r, i, i%2 == 0, &turns))
					f.Close()
				case 1:
					f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
					f.Write([]byte(`"}]}` + "\n"))
					f.Close()
				case 3:
					// A whole record with no newline yet (being written):
					// all the index has not read of the file, and indexed
					// provisionally.
					if b, _ := os.ReadFile(path); len(b) > 0 && b[len(b)-1] == '\n' {
						f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
						f.Write([]byte(`{"record":"message","role":"user","content":[{"type":"text","text":"a needle being written"}]}`))
						f.Close()
					}
				}
			}
			if st, _ := os.Stat(dir); !st.ModTime().Equal(old) {
				t.Fatal("appending changed the directory's mtime")
			}
			checkOracle(t, dir, ix)
			// Sessions that shrank: cut in place after their first half
			// of lines (their later summaries and texts gone), and
			// replaced by a shorter file of the same name (a new inode).
			// Each is indexed again whole, and what was indexed of the
			// lines they no longer have is gone from the answers.
			shrank := 0
			for i, id := range ids {
				if i%5 != 4 {
					continue
				}
				path := filepath.Join(dir, id+session.Ext)
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				lines := bytes.SplitAfter(b, []byte("\n"))
				if len(lines) < 4 {
					continue
				}
				cut := bytes.Join(lines[:len(lines)/2], nil)
				if i%10 == 4 {
					if err := os.Truncate(path, int64(len(cut))); err != nil {
						t.Fatal(err)
					}
				} else {
					tmp := filepath.Join(t.TempDir(), "new")
					if err := os.WriteFile(tmp, cut, 0o600); err != nil {
						t.Fatal(err)
					}
					if err := os.Rename(tmp, path); err != nil {
						t.Fatal(err)
					}
				}
				shrank++
			}
			if shrank < 4 {
				t.Fatalf("only %d sessions shrank", shrank)
			}
			os.Chtimes(dir, old, old)
			checkOracle(t, dir, ix)
			for i, id := range ids {
				if i%5 == 2 && i%3 == 0 {
					os.Remove(filepath.Join(dir, id+session.Ext))
				}
			}
			checkOracle(t, dir, ix)
			// A fresh index over the changed store answers the same.
			checkOracle(t, dir, &Index{dir: dir, path: filepath.Join(dir, ".index/fresh.sqlite")})
		})
	}
}

func TestOracleFixtures(t *testing.T) {
	dir := t.TempDir()
	fixtures, _ := filepath.Glob("../transcript/testdata/v1/*.jsonl")
	if len(fixtures) == 0 {
		t.Fatal("no fixtures")
	}
	for _, f := range fixtures {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o600)
	}
	checkOracle(t, dir, &Index{dir: dir, path: filepath.Join(dir, Name)})
}

// minus is the first few of a that are not in b.
func minus(a, b []string) []string {
	in := map[string]bool{}
	for _, x := range b {
		in[x] = true
	}
	var out []string
	for _, x := range a {
		if !in[x] && len(out) < 3 {
			out = append(out, x)
		}
	}
	return out
}

// TestLimitedListingTrustsAnUnchangedDirectory checks the quick path of
// Totals with a limit (only the sessions shown checked against their
// files, when the directory has not changed) against the scan: appends to
// shown sessions and to others, and a new session.
func TestLimitedListingTrustsAnUnchangedDirectory(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(9, 9))
	genStore(t, dir, r, 40)
	aged(dir) // as an earlier indexing left it
	ix := &Index{dir: dir, path: filepath.Join(dir, Name)}
	checkOracle(t, dir, ix)
	if snap := ix.readSnapshot(readEntries, 0); snap == nil || snap.dirMtime == 0 {
		t.Fatal("the snapshot does not record the directory")
	}
	if _, _, ok := ix.quickTotals(nil, 5); !ok {
		t.Fatal("an unchanged store does not take the quick path")
	}
	scan := &session.Store{Dir: dir}
	l, _ := scan.List()
	// Append to the newest session and to one far down: the quick path
	// must see the first and may pass over the second.
	for _, s := range []session.Info{l.Sessions[0], l.Sessions[len(l.Sessions)-1]} {
		f, _ := os.OpenFile(s.Ref.Path(), os.O_APPEND|os.O_WRONLY, 0)
		turns := 50
		f.Write([]byte("\n"))
		f.Write(runBody(t, r, 99, true, &turns))
		f.Close()
	}
	if _, _, ok := ix.quickTotals(nil, 5); ok {
		t.Error("the quick path missed an append to a session it shows")
	}
	checkOracle(t, dir, ix)
	// A new session: the directory changes.
	at := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	os.WriteFile(filepath.Join(dir, "20270101T000000-0000ffff.jsonl"), encode(t, &transcript.Meta{Format: 1, ID: "20270101T000000-0000ffff", CreatedAt: at, Title: "new"}), 0o600)
	if _, _, ok := ix.quickTotals(nil, 5); ok {
		t.Error("the quick path missed a new session")
	}
	checkOracle(t, dir, ix)
}
