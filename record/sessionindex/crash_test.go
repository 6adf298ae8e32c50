package sessionindex

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// TestMain runs the children of the crash and concurrency tests when
// MECHA_INDEX_CHILD says so.
func TestMain(m *testing.M) {
	switch os.Getenv("MECHA_INDEX_CHILD") {
	case "":
		os.Exit(m.Run())
	case "index", "segments":
		batchBytes = 16 << 10 // many commits, so a kill lands between and inside them
		if os.Getenv("MECHA_INDEX_CHILD") == "segments" {
			// No merge after: the full-text index left in many
			// segments, for the merge to fold.
			optimizeBytes = 1 << 62
		}
		ix := For(os.Getenv("MECHA_INDEX_DIR"), func(s string) { fmt.Fprintln(os.Stderr, s) })
		if _, err := ix.Reindex(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case "merge":
		db, err := openDB(filepath.Join(os.Getenv("MECHA_INDEX_DIR"), Name))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("merging")
		start := time.Now()
		optimize(db)
		fmt.Printf("merged in %v\n", time.Since(start))
		os.Exit(0)
	case "writer":
		os.Exit(childWriter(os.Getenv("MECHA_INDEX_DIR"), os.Getenv("MECHA_INDEX_NAME")))
	case "lister":
		os.Exit(childLister(os.Getenv("MECHA_INDEX_DIR")))
	}
	os.Exit(3)
}

func warnTo(w *bytes.Buffer, mu *sync.Mutex) func(string) {
	return func(s string) { mu.Lock(); fmt.Fprintln(w, s); mu.Unlock() }
}

func TestCorruptIndexRebuiltWithOneLine(t *testing.T) {
	for name, spoil := range map[string]func(path string){
		"garbage": func(path string) { os.WriteFile(path, bytes.Repeat([]byte("not sqlite "), 1000), 0o600) },
		"foreign version": func(path string) {
			db, err := openDB(path)
			if err != nil {
				t.Fatal(err)
			}
			db.Exec("PRAGMA user_version = 99")
			db.Close()
		},
		"truncated": func(path string) {
			b, _ := os.ReadFile(path)
			os.WriteFile(path, b[:len(b)/3], 0o600)
			os.Remove(path + "-wal")
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			genStore(t, dir, rand.New(rand.NewPCG(1, 2)), 30)
			(&Index{dir: dir, path: filepath.Join(dir, Name)}).List() // an index to spoil
			if name != "foreign version" {
				os.Remove(filepath.Join(dir, Name+"-wal"))
				os.Remove(filepath.Join(dir, Name+"-shm"))
			}
			spoil(filepath.Join(dir, Name))
			var said bytes.Buffer
			var mu sync.Mutex
			ix := &Index{dir: dir, path: filepath.Join(dir, Name), warn: warnTo(&said, &mu)}
			checkOracle(t, dir, ix)
			lines := strings.Split(strings.TrimSpace(said.String()), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], "rebuilding it") {
				t.Errorf("want one line saying the index is rebuilt, got %q", said.String())
			}
			// An index a build of another version made is not called
			// damaged: the line says so, and which versions.
			if v := strings.Contains(lines[0], "made by another version of mecha (index version 99, this one's is "+fmt.Sprint(version)+")"); v != (name == "foreign version") {
				t.Errorf("the line names another version: %v, want %v: %q", v, name == "foreign version", lines[0])
			}
		})
	}
}

// TestIndexThatCannotBeMade: when the index's directory is a file, the
// index cannot be made: one line says the transcripts are read instead
// (not a line saying it is rebuilt and another that it cannot be), the
// listing is the full scan's, a search is not narrowed (the files are
// searched), and nothing is said again.
func TestIndexThatCannotBeMade(t *testing.T) {
	dir := t.TempDir()
	genStore(t, dir, rand.New(rand.NewPCG(7, 8)), 20)
	if err := os.WriteFile(filepath.Join(dir, ".index"), []byte("a file where the index's directory goes"), 0o600); err != nil {
		t.Fatal(err)
	}
	var said bytes.Buffer
	var mu sync.Mutex
	ix := &Index{dir: dir, path: filepath.Join(dir, Name), warn: warnTo(&said, &mu)}
	scan, idx := &session.Store{Dir: dir}, &session.Store{Dir: dir, Index: ix}
	for range 2 {
		wl, err1 := scan.List()
		gl, err2 := idx.List()
		if err1 != nil || err2 != nil || !reflect.DeepEqual(infos(gl.Sessions), infos(wl.Sessions)) || len(gl.Sessions) == 0 {
			t.Fatalf("listing without an index differs from the scan: %v %v\n%v\n%v", err1, err2, infos(gl.Sessions), infos(wl.Sessions))
		}
		// The search is not narrowed: the CLI scans the files instead.
		if _, narrowed, err := idx.Candidates(session.NewLiteralQuery("needle")); narrowed || err != nil {
			t.Fatalf("a search was narrowed by an index that cannot be made (err %v)", err)
		}
		// Stats read the files too.
		wt, _, err1 := scan.Totals(nil, 0)
		gt, _, err2 := idx.Totals(nil, 0)
		if err1 != nil || err2 != nil || !reflect.DeepEqual(totalsOf(gt), totalsOf(wt)) || len(gt) == 0 {
			t.Fatalf("totals without an index differ from the scan: %v %v\n%v\n%v", err1, err2, totalsOf(gt), totalsOf(wt))
		}
		ws, _, err1 := scan.Summaries(nil)
		gs, _, err2 := idx.Summaries(nil)
		if err1 != nil || err2 != nil || sums(t, gs) != sums(t, ws) || len(gs) == 0 {
			t.Fatalf("summaries without an index differ from the scan: %v %v\n%s\n%s", err1, err2, sums(t, gs), sums(t, ws))
		}
	}
	lines := strings.Split(strings.TrimSpace(said.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "cannot be made (") || !strings.Contains(lines[0], "not a directory") || !strings.HasSuffix(lines[0], "reading the transcripts instead") {
		t.Errorf("want one line saying the index cannot be made and why, got %q", said.String())
	}
}

// TestLargeIndexingSaid: indexing more than the thresholds is said in one
// line before it starts, and not again once done; below them, nothing.
func TestLargeIndexingSaid(t *testing.T) {
	dir := t.TempDir()
	genStore(t, dir, rand.New(rand.NewPCG(5, 6)), 30)
	var said bytes.Buffer
	var mu sync.Mutex
	quiet := &Index{dir: dir, path: filepath.Join(dir, ".index/quiet.sqlite"), warn: warnTo(&said, &mu)}
	quiet.List()
	if said.Len() != 0 {
		t.Fatalf("a small store's indexing was said: %q", said.String())
	}
	defer func(b int64, f int) { announceBytes, announceFiles = b, f }(announceBytes, announceFiles)
	announceFiles = 10
	ix := &Index{dir: dir, path: filepath.Join(dir, Name), warn: warnTo(&said, &mu)}
	ix.List()
	ix.List()
	lines := strings.Split(strings.TrimSpace(said.String()), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "indexing ") || !strings.Contains(lines[0], " sessions (") {
		t.Fatalf("want one line announcing the indexing, got %q", said.String())
	}
}

func TestDeletedIndexLosesNothing(t *testing.T) {
	dir := t.TempDir()
	genStore(t, dir, rand.New(rand.NewPCG(3, 4)), 20)
	ix := &Index{dir: dir, path: filepath.Join(dir, Name)}
	checkOracle(t, dir, ix)
	ix.Close()
	for _, s := range []string{"", "-wal", "-shm"} {
		os.Remove(filepath.Join(dir, Name+s))
	}
	checkOracle(t, dir, &Index{dir: dir, path: filepath.Join(dir, Name)})
}

// removeIndex removes the index of the store in dir: the database, its
// log and the snapshot.
func removeIndex(dir string) {
	for _, s := range []string{"", "-wal", "-shm"} {
		os.Remove(filepath.Join(dir, Name+s))
	}
	os.Remove((&Index{path: filepath.Join(dir, Name)}).listPath())
}

// readAfterKill is the reader after a trial's kill: what it reads from the
// index equals the scan, and it says nothing (nothing was found damaged).
func readAfterKill(t *testing.T, dir string, trial int) {
	t.Helper()
	var said bytes.Buffer
	var mu sync.Mutex
	ix := &Index{dir: dir, path: filepath.Join(dir, Name), warn: warnTo(&said, &mu)}
	defer ix.Close()
	checkOracle(t, dir, ix)
	if said.Len() > 0 {
		t.Errorf("trial %d: the reader after the kill said %q", trial, said.String())
	}
}

// TestKillDuringIndexing kills an indexing process at random points, then
// checks that the next reader finds the index consistent with the files.
func TestKillDuringIndexing(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a store and kills processes")
	}
	dir := t.TempDir()
	genStore(t, dir, rand.New(rand.NewPCG(5, 6)), 200)
	r := rand.New(rand.NewPCG(7, 8))
	killed := 0
	for trial := range 8 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "MECHA_INDEX_CHILD=index", "MECHA_INDEX_DIR="+dir)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(20+r.IntN(400)) * time.Millisecond)
		cmd.Process.Kill() // SIGKILL
		if err := cmd.Wait(); err != nil {
			killed++
		}
		readAfterKill(t, dir, trial)
		if trial%2 == 1 { // half the trials start from no index
			for _, s := range []string{"", "-wal", "-shm"} {
				os.Remove(filepath.Join(dir, Name+s))
			}
		}
	}
	t.Logf("%d of 8 indexing processes killed before they finished", killed)
	if killed == 0 {
		t.Error("no kill landed during indexing: the trials tested nothing")
	}
}

// TestKillDuringMerge kills a process in the middle of merging the
// full-text index's segments into one (what a sync that wrote a lot does
// at its end, see optimize), at a random moment of the merge: the next
// reader finds the index consistent (its listing, totals and searches
// equal the scan's) and says nothing.
func TestKillDuringMerge(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a store and kills processes")
	}
	dir := t.TempDir()
	genStore(t, dir, rand.New(rand.NewPCG(9, 10)), 200)
	r := rand.New(rand.NewPCG(11, 12))
	// merge indexes the store in many segments and starts merging them; it
	// returns the merging child (past its "merging" line) and its output.
	merge := func() (*exec.Cmd, *bufio.Reader) {
		t.Helper()
		for _, s := range []string{"", "-wal", "-shm"} {
			os.Remove(filepath.Join(dir, Name+s))
		}
		child := func(kind string) *exec.Cmd {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "MECHA_INDEX_CHILD="+kind, "MECHA_INDEX_DIR="+dir)
			return cmd
		}
		if out, err := child("segments").CombinedOutput(); err != nil {
			t.Fatalf("indexing in segments: %v: %s", err, out)
		}
		cmd := child("merge")
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		rd := bufio.NewReader(out)
		if line, err := rd.ReadString('\n'); line != "merging\n" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the merging child said %q (%v)", line, err)
		}
		return cmd, rd
	}
	// One merge left to finish says how long merging this index takes;
	// the kills land at random moments over one and a half times that, the
	// shortest merge seen.
	cmd, rd := merge()
	rest, _ := io.ReadAll(rd)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("merging: %v", err)
	}
	mergedIn := func(said []byte) (time.Duration, bool) {
		d, ok := strings.CutPrefix(strings.TrimSpace(string(said)), "merged in ")
		took, err := time.ParseDuration(d)
		return took, ok && err == nil && took > 0
	}
	took, ok := mergedIn(rest)
	if !ok {
		t.Fatalf("the merging child said %q", rest)
	}
	landed := 0
	for trial := range 8 {
		cmd, rd := merge()
		time.Sleep(time.Duration(r.Int64N(int64(took) * 3 / 2)))
		cmd.Process.Kill() // SIGKILL
		rest, _ := io.ReadAll(rd)
		cmd.Wait()
		if d, finished := mergedIn(rest); !finished {
			landed++
		} else {
			took = min(took, d) // a loaded machine made the first one slow: aim shorter
		}
		readAfterKill(t, dir, trial)
	}
	t.Logf("a merge takes %v here; %d of 8 killed before they finished", took, landed)
	if landed == 0 {
		t.Error("no kill landed during a merge: the trials tested nothing")
	}
}

const writerSessions = 5

func childWriter(dir, name string) int {
	st := &session.Store{Dir: dir, Index: For(dir, func(s string) { fmt.Fprintln(os.Stderr, s) })}
	for i := range writerSessions {
		w, err := st.Create(transcript.Meta{Title: fmt.Sprintf("%s %d", name, i), Provider: "mock", Model: "m", Workspace: "/w"})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		for j := range 20 {
			w.Append(&transcript.Message{Role: transcript.RoleUser, Content: []transcript.Block{transcript.TextBlock(fmt.Sprintf("%s says %d %s", name, j, strings.Repeat("words ", 200)))}})
		}
		turns := 1
		w.Append(&transcript.Summary{Turns: 1, StopReason: "end_turn", SessionTurns: &turns})
		if err := w.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println(w.ID())
	}
	return 0
}

// childLister lists until the stop file appears; a session once listed
// must stay listed (none is removed), and every listing must succeed.
func childLister(dir string) int {
	st := &session.Store{Dir: dir, Index: For(dir, func(s string) { fmt.Fprintln(os.Stderr, s) })}
	seen := map[string]bool{}
	for n := 0; ; n++ {
		if _, err := os.Stat(filepath.Join(dir, "stop")); err == nil && n > 0 {
			return 0
		}
		l, _, err := st.Totals(nil, 0)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		now := map[string]bool{}
		for _, s := range l {
			now[s.Ref.ID] = true
		}
		for id := range seen {
			if !now[id] {
				fmt.Fprintf(os.Stderr, "%s was listed, then missing\n", id)
				return 1
			}
		}
		seen = now
	}
}

func TestWritersAndListersAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 16 processes")
	}
	dir := t.TempDir()
	os.MkdirAll(dir, 0o700)
	start := func(role, name string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "MECHA_INDEX_CHILD="+role, "MECHA_INDEX_DIR="+dir, "MECHA_INDEX_NAME="+name)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &out, &errb
	}
	type proc struct {
		cmd      *exec.Cmd
		out, err *bytes.Buffer
	}
	var listers, writers []proc
	for i := range 8 {
		c, o, e := start("lister", "")
		listers = append(listers, proc{c, o, e})
		c, o, e = start("writer", fmt.Sprint("w", i))
		writers = append(writers, proc{c, o, e})
	}
	var ids []string
	for i, p := range writers {
		if err := p.cmd.Wait(); err != nil || p.err.Len() > 0 {
			t.Errorf("writer %d: %v: %s", i, err, p.err)
		}
		ids = append(ids, strings.Fields(p.out.String())...)
	}
	os.WriteFile(filepath.Join(dir, "stop"), nil, 0o600)
	for i, p := range listers {
		if err := p.cmd.Wait(); err != nil || p.err.Len() > 0 {
			t.Errorf("lister %d: %v: %s", i, err, p.err)
		}
	}
	if len(ids) != 8*writerSessions {
		t.Fatalf("writers made %d sessions, want %d", len(ids), 8*writerSessions)
	}
	ix := &Index{dir: dir, path: filepath.Join(dir, Name)}
	l, err := ix.List()
	if err != nil || len(l.Sessions) != len(ids) {
		t.Fatalf("listed %d sessions (%v), want %d", len(l.Sessions), err, len(ids))
	}
	checkOracle(t, dir, ix)
}

// TestDamagedSnapshotRebuilt: a listing snapshot (index.list) damaged
// anywhere, in the part a listing reads or in the summaries only stats
// reads, is rebuilt with one line, and every answer is the scan's; one of
// another layout is rebuilt without a word.
func TestDamagedSnapshotRebuilt(t *testing.T) {
	flip := func(at func(b []byte, l *layout) int) func(b []byte) []byte {
		return func(b []byte) []byte {
			_, l, err := decodeHeader(b)
			if err != nil {
				t.Fatal(err)
			}
			b[at(b, l)] ^= 0x20
			return b
		}
	}
	for _, c := range []struct {
		name  string
		spoil func(b []byte) []byte
		said  bool
	}{
		{"a block's byte", flip(func(b []byte, l *layout) int { return l.headerEnd + l.blocks[0]/2 }), true},
		{"the last block's CRC", flip(func(b []byte, l *layout) int { return l.end() - 2 }), true},
		{"a summary's byte", flip(func(b []byte, l *layout) int { return l.end() + l.sumsLen/2 }), true},
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }, true},
		{"cut before the summaries", func(b []byte) []byte {
			_, l, _ := decodeHeader(b)
			return b[:l.end()]
		}, true},
		{"garbage", func(b []byte) []byte { return bytes.Repeat([]byte("not a list "), 100) }, true},
		{"a few bytes of garbage", func(b []byte) []byte { return []byte("junk") }, true},
		{"the magic's start alone", func(b []byte) []byte { return snapMagic[:7] }, true},
		{"another layout", func(b []byte) []byte { return append([]byte("mecha index.list 3\n"), b[len(snapMagic):]...) }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			genStore(t, dir, rand.New(rand.NewPCG(3, 4)), 140)
			aged(dir)
			first := &Index{dir: dir, path: filepath.Join(dir, Name)}
			if _, err := first.List(); err != nil {
				t.Fatal(err)
			}
			first.Close()
			path := first.listPath()
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if _, l, _ := decodeHeader(b); len(l.blocks) < 2 {
				t.Fatalf("the snapshot has %d blocks, want several", len(l.blocks))
			}
			os.WriteFile(path, c.spoil(b), 0o600)
			var said bytes.Buffer
			var mu sync.Mutex
			ix := &Index{dir: dir, path: filepath.Join(dir, Name), warn: warnTo(&said, &mu)}
			checkOracle(t, dir, ix)
			lines := strings.Split(strings.TrimSpace(said.String()), "\n")
			switch {
			case c.said && (len(lines) != 1 || !strings.Contains(lines[0], "damaged; rebuilding it")):
				t.Errorf("want one line saying the snapshot is rebuilt, got %q", said.String())
			case !c.said && said.Len() > 0:
				t.Errorf("want nothing said, got %q", said.String())
			}
			if s := ix.readSnapshot(readAll, 0); s == nil || !s.complete() {
				t.Error("the snapshot was not rebuilt")
			}
		})
	}
}

// TestInterruptedIndexing: an indexing large enough to be announced stops
// at StopOn's channel, between two sessions, keeping what it committed;
// the reader returns ErrInterrupted (it neither gives up on the index nor
// reads the transcripts instead), and the next reader goes on from there
// and equals the scan. A small catch-up is never stopped: the writer's
// own update as a session closes always finishes. The control: without
// StopOn the same indexing finishes.
func TestInterruptedIndexing(t *testing.T) {
	defer func(b, f int) { batchBytes, announceFiles = b, f }(batchBytes, announceFiles)
	defer func() { testHookCommitted = nil }()
	batchBytes = 1 // a commit after each session
	dir := t.TempDir()
	genStore(t, dir, rand.New(rand.NewPCG(13, 14)), 60)
	indexed := func(t *testing.T) int {
		t.Helper()
		db, err := openDB(filepath.Join(dir, Name))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var n int
		if err := db.QueryRow("SELECT count(*) FROM sessions WHERE done > 0").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, tc := range []struct {
		name      string
		announced bool // the work is over announceFiles
		stop      bool // StopOn is given a channel
		search    bool // the reader is a search (Candidates), not a listing
		wantErr   bool
	}{
		{"announced and interrupted", true, true, false, true},
		{"a search, announced and interrupted", true, true, true, true},
		{"announced, no StopOn (the control)", true, false, false, false},
		{"a small catch-up, interrupted", false, true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			removeIndex(dir)
			announceFiles = 1000
			if tc.announced {
				announceFiles = 10 // the 40-60 sessions to index are a large indexing
			}
			stop := make(chan struct{})
			commits := 0
			testHookCommitted = func() {
				if commits++; commits == 5 {
					close(stop)
				}
			}
			var said bytes.Buffer
			var mu sync.Mutex
			ix := &Index{dir: dir, path: filepath.Join(dir, Name), warn: warnTo(&said, &mu)}
			if tc.stop {
				ix.StopOn(stop)
			}
			var err error
			if tc.search {
				_, _, err = ix.Candidates(session.NewLiteralQuery("needle"))
			} else {
				_, err = ix.List()
			}
			ix.Close()
			testHookCommitted = nil
			if !tc.wantErr {
				if err != nil {
					t.Fatalf("reading: %v", err)
				}
				if n := indexed(t); n != 60 {
					t.Errorf("%d of 60 sessions indexed", n)
				}
				return
			}
			if !errors.Is(err, ErrInterrupted) {
				t.Fatalf("reading after the interrupt: %v, want ErrInterrupted", err)
			}
			if strings.Contains(said.String(), "instead") || strings.Count(said.String(), "\n") != 1 {
				t.Errorf("the interrupted reader said %q, want the one line announcing the indexing", said.String())
			}
			if n := indexed(t); n != 5 {
				t.Errorf("%d sessions indexed before the interrupt, want the 5 committed", n)
			}
			announceFiles = 1000 // the rest is not announced
			readAfterKill(t, dir, 0)
			if n := indexed(t); n != 60 {
				t.Errorf("%d of 60 sessions indexed by the next reader", n)
			}
		})
	}
}

// TestBackfill: a reader that finds a large indexing to do hands it to
// SetBackfill's start and, when start takes it, answers from the files
// (equal to the scan) without indexing; when start declines, or the work
// is small, or for CatchUp (the process start starts), it indexes itself.
func TestBackfill(t *testing.T) {
	defer func(f int) { announceFiles = f }(announceFiles)
	dir := t.TempDir()
	genStore(t, dir, rand.New(rand.NewPCG(15, 16)), 40)
	scan, err := session.ScanList(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		large      bool // the work is over announceFiles
		take       bool // start takes it
		catchUp    bool // CatchUp rather than List
		search     bool // Candidates rather than List
		wantCalled bool
		wantIndex  bool
	}{
		{"large, handed off", true, true, false, false, true, false},
		{"a search, large, handed off", true, true, false, true, true, false},
		{"large, declined", true, false, false, false, true, true},
		{"small", false, true, false, false, false, true},
		{"CatchUp", true, true, true, false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			removeIndex(dir)
			announceFiles = 1000
			if tc.large {
				announceFiles = 10 // the 40-60 sessions to index are a large indexing
			}
			called, files := false, 0
			ix := &Index{dir: dir, path: filepath.Join(dir, Name)}
			ix.SetBackfill(func(n int, _ int64) bool { called, files = true, n; return tc.take })
			switch {
			case tc.catchUp:
				if _, err := ix.CatchUp(); err != nil {
					t.Fatal(err)
				}
			case tc.search:
				// Handed off, the search cannot be narrowed: the caller
				// reads the transcripts.
				if _, narrowed, err := ix.Candidates(session.NewLiteralQuery("needle")); err != nil || narrowed {
					t.Fatalf("Candidates: narrowed %v, %v", narrowed, err)
				}
			default:
				l, err := ix.List()
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(infos(l.Sessions), infos(scan.Sessions)) {
					t.Errorf("the listing differs from the scan")
				}
			}
			ix.Close()
			if called != tc.wantCalled {
				t.Errorf("start called: %v, want %v", called, tc.wantCalled)
			}
			if called && files < len(scan.Sessions) {
				t.Errorf("start told of %d sessions, the store has %d", files, len(scan.Sessions))
			}
			_, err := os.Stat((&Index{path: filepath.Join(dir, Name)}).listPath())
			if indexed := err == nil; indexed != tc.wantIndex {
				t.Errorf("indexed: %v, want %v", indexed, tc.wantIndex)
			}
		})
	}
}

// TestCorruptionFoundInUse: an index whose header and schema check read
// well, but which fails when a read reaches further, opens without
// complaint. The reader that finds the failure rebuilds the index, says so
// in one line, and answers as the full scan does: when a page of the
// sessions table is garbage ("database disk image is malformed", found
// bringing the index in step), when a page of the summaries is (found
// making the snapshot, which the step does not read), and when a column
// the schema check does not read is gone (an index a build with another
// schema but the same version left: "no such column").
func TestCorruptionFoundInUse(t *testing.T) {
	garbagePage := func(table string) func(t *testing.T, path string) {
		return func(t *testing.T, path string) {
			db, err := openDB(path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
				t.Fatal(err)
			}
			var root, pageSize int64
			if err := db.QueryRow("SELECT rootpage FROM sqlite_master WHERE name = ?", table).Scan(&root); err != nil {
				t.Fatal(err)
			}
			if err := db.QueryRow("PRAGMA page_size").Scan(&pageSize); err != nil {
				t.Fatal(err)
			}
			db.Close()
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			leaf := rightmostLeaf(t, b, root, pageSize)
			if leaf == root {
				t.Fatalf("the %s table fits in its root page: the store is too small to test a page the schema check does not read", table)
			}
			copy(b[(leaf-1)*pageSize:leaf*pageSize], bytes.Repeat([]byte{0xff}, int(pageSize)))
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			os.Remove(path + "-wal")
			os.Remove(path + "-shm")
		}
	}
	for _, c := range []struct {
		name, says string
		spoil      func(t *testing.T, path string)
	}{
		{"a page of sessions", "malformed", garbagePage("sessions")},
		{"a page of summaries", "malformed", garbagePage("sums")},
		{"a column gone", "no such column", func(t *testing.T, path string) {
			db, err := openDB(path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec("ALTER TABLE sessions DROP COLUMN prov"); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			genStore(t, dir, rand.New(rand.NewPCG(11, 12)), 120)
			path := filepath.Join(dir, Name)
			first := &Index{dir: dir, path: path}
			if _, err := first.List(); err != nil {
				t.Fatal(err)
			}
			first.Close()
			c.spoil(t, path)
			// No snapshot: the reader opens the database, and the schema
			// check passes.
			os.Remove(first.listPath())
			var said bytes.Buffer
			var mu sync.Mutex
			ix := &Index{dir: dir, path: path, warn: warnTo(&said, &mu)}
			checkOracle(t, dir, ix)
			lines := strings.Split(strings.TrimSpace(said.String()), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], c.says) || !strings.HasSuffix(lines[0], "rebuilding it") {
				t.Errorf("want one line saying the index (%s) is rebuilt, got %q", c.says, said.String())
			}
		})
	}
}

// rightmostLeaf follows the right-most child pointers of a b-tree in the
// database file b from page root down to its last leaf (SQLite's file
// format: a page's header, after the file's 100-byte header on page 1, is
// a type byte, 0x02 or 0x05 for an interior page, whose right-most
// pointer is at offset 8, 0x0a or 0x0d for a leaf).
func rightmostLeaf(t *testing.T, b []byte, root, pageSize int64) int64 {
	t.Helper()
	p := root
	for range 64 {
		page := b[(p-1)*pageSize : p*pageSize]
		if p == 1 {
			page = page[100:]
		}
		switch page[0] {
		case 0x0a, 0x0d:
			return p
		case 0x02, 0x05:
			p = int64(binary.BigEndian.Uint32(page[8:]))
		default:
			t.Fatalf("page %d is of type %#x, not a b-tree page", p, page[0])
		}
	}
	t.Fatal("no leaf within 64 levels")
	return 0
}

// TestCheckpointEmptiesTheLog: a sync that wrote, once the write-ahead log
// passed walBytes, copies it into the database and empties it (so that
// the next process to open the index does not read the whole log again);
// below walBytes the log is left as it is.
func TestCheckpointEmptiesTheLog(t *testing.T) {
	defer func(b int64) { walBytes = b }(walBytes)
	for _, tc := range []struct {
		walBytes int64
		empty    bool
	}{{1, true}, {1 << 40, false}} {
		walBytes = tc.walBytes
		dir := t.TempDir()
		genStore(t, dir, rand.New(rand.NewPCG(13, 14)), 20)
		ix := &Index{dir: dir, path: filepath.Join(dir, Name)}
		if _, err := ix.List(); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(ix.path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		if (st.Size() == 0) != tc.empty {
			t.Errorf("walBytes %d: the log is %d bytes after a sync that wrote (want empty: %v)", tc.walBytes, st.Size(), tc.empty)
		}
		ix.Close()
	}
}

// TestDeletedFilesAnsweredFromTheIndex: the first reader after a few
// sessions' files were deleted (by hand, or by another tool) answers from
// the index brought in step, not from the files, and leaves a snapshot
// that no longer names them: patching the one there was (rather than
// making it again from the whole database, as an append is patched,
// TestAppendIsPatched), or, when there was none, making it from the
// database once the rows of the files gone are forgotten.
func TestDeletedFilesAnsweredFromTheIndex(t *testing.T) {
	for _, snapshotGone := range []bool{false, true} {
		t.Run(fmt.Sprintf("snapshot gone %v", snapshotGone), func(t *testing.T) {
			dir := t.TempDir()
			ids := genStore(t, dir, rand.New(rand.NewPCG(23, 24)), 30)
			ix := &Index{dir: dir, path: filepath.Join(dir, Name)}
			if _, err := ix.List(); err != nil {
				t.Fatal(err)
			}
			gone := map[string]bool{ids[3]: true, ids[17]: true}
			for id := range gone {
				if err := os.Remove(filepath.Join(dir, id+session.Ext)); err != nil {
					t.Fatal(err)
				}
			}
			if snapshotGone {
				os.Remove(ix.listPath())
			}
			rebuilt := false
			testHookRebuilding = func() { rebuilt = true }
			_, err := ix.List()
			testHookRebuilding = nil
			if err != nil {
				t.Fatal(err)
			}
			if rebuilt != snapshotGone {
				t.Errorf("the snapshot made again from the whole database: %v, want %v", rebuilt, snapshotGone)
			}
			snap := ix.readSnapshot(readEntries, 0)
			if snap == nil {
				t.Fatal("the reader left no snapshot: it read the files")
			}
			for _, x := range snap.entries {
				if gone[x.name] {
					t.Errorf("the snapshot still names %s, whose file was deleted", x.name)
				}
			}
			if len(snap.entries) != len(ids)-len(gone) {
				t.Errorf("the snapshot names %d sessions, want %d", len(snap.entries), len(ids)-len(gone))
			}
			checkOracle(t, dir, ix)
		})
	}
}
