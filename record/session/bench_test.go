package session

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/record/transcript"
)

// Benchmarks build their stores once under $MECHA_BENCH_DIR (default
// $TMPDIR/mecha-bench) and reuse them across runs: a store of 10,000 1 MB
// transcripts is 10 GB and takes a while to write. MECHA_BENCH_SESSIONS
// changes the number of sessions (default 10,000).

func benchDir(b *testing.B) string {
	d := os.Getenv("MECHA_BENCH_DIR")
	if d == "" {
		d = filepath.Join(os.TempDir(), "mecha-bench")
	}
	return d
}

func benchSessions() int {
	if n, err := strconv.Atoi(os.Getenv("MECHA_BENCH_SESSIONS")); err == nil && n > 0 {
		return n
	}
	return 10000
}

// body returns the records after the header of a transcript of about size
// bytes: a config, a user turn, tool calls and results of about line bytes
// each, an answer, a taint checkpoint and a summary, like a real run.
func body(size, line int) []byte {
	var sb strings.Builder
	add := func(r transcript.Record) {
		line, err := transcript.Encode(r)
		if err != nil {
			panic(err)
		}
		sb.Write(line)
	}
	prompt := "You are mecha, an agent working in a repository."
	add(&transcript.Config{MechaVersion: "dev", Provider: "anthropic", Model: "claude-opus-5", Workspace: "/home/you/project",
		SystemPrompt: &prompt, Tools: []string{"fs_read", "fs_list", "fs_write", "fs_edit", "shell"}, CachePrompt: true,
		MaxTokens: 8192, MaxTurns: 50, CompactKeepRecent: 6, PermissionMode: "ask", Trifecta: "refuse", Sandbox: "none"})
	add(&transcript.Message{Role: transcript.RoleUser, Content: []transcript.Block{transcript.TextBlock("summarize what changed")}})
	for i := 0; sb.Len() < size-600; i++ {
		id := fmt.Sprintf("toolu_%d", i)
		add(&transcript.Message{Role: transcript.RoleAssistant, Content: []transcript.Block{
			transcript.ToolUseBlock(id, "fs_read", json.RawMessage(`{"path":"src/file.go"}`))}})
		chunk := min(line, max(size-600-sb.Len(), 16))
		add(&transcript.Message{Role: transcript.RoleUser, Content: []transcript.Block{
			transcript.ToolResultBlock(id, strings.Repeat("package main // a line of source\n", chunk/33+1)[:chunk], false)}})
	}
	add(&transcript.Message{Role: transcript.RoleAssistant, Content: []transcript.Block{transcript.TextBlock("It got faster.")}})
	add(&transcript.Taint{Private: true})
	add(&transcript.Summary{Usage: transcript.Usage{InputTokens: 1000, OutputTokens: 200}, Turns: 3, Provider: "anthropic", Model: "claude-opus-5"})
	return []byte(sb.String())
}

// withTotal returns a body whose closing summary carries session_turns, as
// agent.Run writes it since listing reads it from the last line.
func withTotal(body []byte) []byte {
	old, err := transcript.Encode(&transcript.Summary{Usage: transcript.Usage{InputTokens: 1000, OutputTokens: 200}, Turns: 3,
		Provider: "anthropic", Model: "claude-opus-5"})
	if err != nil || !strings.HasSuffix(string(body), string(old)) {
		panic("the body does not end with its summary")
	}
	turns := 3
	line, _ := transcript.Encode(&transcript.Summary{Usage: transcript.Usage{InputTokens: 1000, OutputTokens: 200}, Turns: 3,
		Provider: "anthropic", Model: "claude-opus-5", SessionTurns: &turns})
	return append(body[:len(body)-len(old):len(body)-len(old)], line...)
}

// store returns a directory of n sessions of about size bytes each,
// creating it the first time.
func store(b *testing.B, n, size int) string { return storeOf(b, n, size, false) }

// storeOf is store, with session_turns in the summaries when total.
func storeOf(b *testing.B, n, size int, total bool) string {
	b.Helper()
	name := fmt.Sprintf("store-%d-%d", n, size)
	if total {
		name += "-total"
	}
	dir := filepath.Join(benchDir(b), name)
	done := filepath.Join(dir, ".complete")
	if _, err := os.Stat(done); err == nil {
		return dir
	}
	b.Logf("writing %d sessions of %d bytes to %s (once)", n, size, dir)
	os.RemoveAll(dir)
	if err := writeStoreOf(dir, n, size, 64<<10, total); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(done, nil, 0o600); err != nil {
		b.Fatal(err)
	}
	return dir
}

// writeStore writes n sessions of about size bytes, whose tool results are
// about line bytes each, into dir.
func writeStore(dir string, n, size, line int) error { return writeStoreOf(dir, n, size, line, false) }

// writeStoreOf is writeStore, with session_turns in the summaries when
// total.
func writeStoreOf(dir string, n, size, line int, total bool) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	rest := body(size, line)
	if total {
		rest = withTotal(rest)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	errs := make([]error, n)
	Parallel(n, func(i int) {
		id := fmt.Sprintf("%s-%08x", base.Add(time.Duration(i)*time.Minute).Format(idLayout), i)
		head, _ := transcript.Encode(&transcript.Meta{Format: 1, ID: id, CreatedAt: base.Add(time.Duration(i) * time.Minute),
			Provider: "anthropic", Model: "claude-opus-5", Workspace: "/home/you/project", Title: "summarize what changed"})
		errs[i] = os.WriteFile(filepath.Join(dir, id+Ext), append(head, rest...), 0o600)
	})
	return errors.Join(errs...)
}

func sessionFiles(b *testing.B, dir string) []string {
	files, err := filepath.Glob(filepath.Join(dir, "*"+Ext))
	if err != nil || len(files) == 0 {
		b.Fatalf("no sessions in %s: %v", dir, err)
	}
	return files
}

// BenchmarkList lists the store with Store.List and, as the baseline in the same
// run, with head -qn1 over the same files.
func BenchmarkList(b *testing.B) {
	n := benchSessions()
	for _, size := range []int{1 << 10, 1 << 20} {
		dir := store(b, n, size)
		files := sessionFiles(b, dir)
		b.Run(fmt.Sprintf("size=%s/mecha", human(size)), func(b *testing.B) {
			for b.Loop() {
				l, err := (&Store{Dir: dir}).List()
				if err != nil || len(l.Sessions) != n {
					b.Fatalf("%v: %d sessions", err, len(l.Sessions))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/session")
		})
		b.Run(fmt.Sprintf("size=%s/head-qn1", human(size)), func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command("head", append([]string{"-qn1"}, files...)...)
				if err := cmd.Run(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/session")
		})
	}
}

// listShapes are the stores listing with turns and stop reasons is
// measured on: the shapes the listing figures were first quoted for, and
// many mid-sized transcripts.
var listShapes = []struct{ n, size int }{{1000, 1 << 10}, {1000, 1 << 20}, {10000, 8 << 10}}

// BenchmarkListTotals lists with turns and stop reasons as sessions list
// does (Store.Totals) on stores whose summaries carry session_turns (the
// last line answers: "tail") and on the same stores written before the
// field (every file read whole: "full"), against head -qn1 over the same
// files in the same run.
func BenchmarkListTotals(b *testing.B) {
	for _, sh := range listShapes {
		for _, total := range []bool{true, false} {
			dir := storeOf(b, sh.n, sh.size, total)
			files := sessionFiles(b, dir)
			path := map[bool]string{true: "tail", false: "full"}[total]
			b.Run(fmt.Sprintf("n=%d/size=%s/%s", sh.n, human(sh.size), path), func(b *testing.B) {
				for b.Loop() {
					read, _, err := (&Store{Dir: dir}).Totals(nil, 0)
					if err != nil || len(read) != sh.n || read[0].Tail != total || read[0].Turns != 3 {
						b.Fatalf("%v: %d sessions, %+v", err, len(read), read[0])
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(sh.n), "ns/session")
			})
			b.Run(fmt.Sprintf("n=%d/size=%s/%s-head-qn1", sh.n, human(sh.size), path), func(b *testing.B) {
				for b.Loop() {
					if err := exec.Command("head", append([]string{"-qn1"}, files...)...).Run(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(sh.n), "ns/session")
			})
		}
	}
}

// statsShapes are the stores sessions stats is held to: many small
// transcripts of short lines, where what is paid per file and per line
// shows, and fewer large ones of 64 KB lines, where reading the bytes is
// nearly all of it. Both are about 1 GB.
var statsShapes = []struct {
	name          string
	n, size, line int
}{
	{"10000x100KB-lines4KB", 10000, 100 << 10, 4 << 10},
	{"1000x1MB-lines64KB", 1000, 1 << 20, 64 << 10},
}

var statsStores struct {
	sync.Mutex
	root string // removed by TestMain
	dirs map[string]string
}

// statsStore returns the store of a shape, writing it the first time this
// process asks, under a temporary directory TestMain removes.
func statsStore(b *testing.B, name string, n, size, line int) string {
	b.Helper()
	statsStores.Lock()
	defer statsStores.Unlock()
	if d, ok := statsStores.dirs[name]; ok {
		return d
	}
	if statsStores.root == "" {
		root, err := os.MkdirTemp("", "mecha-bench-stats-")
		if err != nil {
			b.Fatal(err)
		}
		statsStores.root, statsStores.dirs = root, map[string]string{}
	}
	dir := filepath.Join(statsStores.root, name)
	if err := writeStore(dir, n, size, line); err != nil {
		b.Fatal(err)
	}
	statsStores.dirs[name] = dir
	return dir
}

func removeStatsStores() {
	if statsStores.root != "" {
		os.RemoveAll(statsStores.root)
	}
}

// statsSummaries reads every summary in dir as sessions stats does and
// returns how many it found.
func statsSummaries(dir string) (int, error) {
	read, _, err := (&Store{Dir: dir}).Summaries(nil)
	if err != nil {
		return 0, err
	}
	found := 0
	for _, r := range read {
		if r.Err != nil {
			return found, r.Err
		}
		found += len(r.Summaries)
	}
	return found, nil
}

// BenchmarkStats reads every summary of each store in statsShapes as
// sessions stats does, and as its baseline runs grep -rhF for the same
// lines over the same directory in the same iteration, alternating which
// goes first so the machine's drift weighs on both. It reports the median
// of each and the ratio of the medians; run it with -benchtime=5x.
func BenchmarkStats(b *testing.B) {
	for _, sh := range statsShapes {
		dir := statsStore(b, sh.name, sh.n, sh.size, sh.line)
		b.Run(sh.name, func(b *testing.B) {
			var mecha, grep []time.Duration
			runMecha := func() {
				start := time.Now()
				found, err := statsSummaries(dir)
				mecha = append(mecha, time.Since(start))
				if err != nil || found != sh.n {
					b.Fatalf("%d summaries in %d sessions: %v", found, sh.n, err)
				}
			}
			runGrep := func() {
				start := time.Now()
				if err := exec.Command("grep", "-rhF", `{"record":"summary"`, dir).Run(); err != nil {
					b.Fatal(err)
				}
				grep = append(grep, time.Since(start))
			}
			i := 0
			for b.Loop() {
				if i%2 == 0 {
					runMecha()
					runGrep()
				} else {
					runGrep()
					runMecha()
				}
				i++
			}
			m, g := median(mecha), median(grep)
			b.ReportMetric(float64(m.Nanoseconds()), "mecha-ns")
			b.ReportMetric(float64(g.Nanoseconds()), "grep-ns")
			b.ReportMetric(float64(m)/float64(g), "mecha/grep")
		})
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// big returns a transcript of about size bytes in which every tool result
// is 64 KB, created once.
func big(b *testing.B, size int) string {
	b.Helper()
	path := filepath.Join(benchDir(b), fmt.Sprintf("big-%d.jsonl", size))
	if st, err := os.Stat(path); err == nil && st.Size() >= int64(size)-(1<<20) {
		return path
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		b.Fatal(err)
	}
	f, err := os.Create(path + ".tmp")
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	head, _ := transcript.Encode(&transcript.Meta{Format: 1, ID: "20260101T000000-00000000", CreatedAt: time.Now().UTC(), Provider: "anthropic", Model: "m", Title: "big"})
	w.Write(head)
	chunk := body(4<<20, 64<<10)
	for written := 0; written < size; written += len(chunk) {
		w.Write(chunk)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	if err := os.Rename(path+".tmp", path); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkLoad300MB loads a 300 MB transcript and reports the heap it
// retains and the peak heap while loading, each as a multiple of the file.
func BenchmarkLoad300MB(b *testing.B) {
	path := big(b, 300<<20)
	st, _ := os.Stat(path)
	size := float64(st.Size())
	b.SetBytes(st.Size())
	var retained, peak float64
	for b.Loop() {
		runtime.GC()
		before := heapBytes()
		stop := samplePeak()
		s, err := Load(path)
		peakBytes := stop()
		if err != nil || s.Skipped != 0 {
			b.Fatalf("%v, skipped %d", err, s.Skipped)
		}
		runtime.GC()
		retained = max(retained, float64(heapBytes()-before)/size)
		peak = max(peak, float64(peakBytes-before)/size)
		runtime.KeepAlive(s)
	}
	b.ReportMetric(retained, "retained/filesize")
	b.ReportMetric(peak, "peak/filesize")
}

func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// samplePeak watches the live heap until the returned function is called,
// and that function returns the largest value seen.
func samplePeak() func() uint64 {
	var (
		peak atomic.Uint64
		wg   sync.WaitGroup
		done = make(chan struct{})
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			if h := heapBytes(); h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		if h := heapBytes(); h > peak.Load() {
			peak.Store(h)
		}
		return peak.Load()
	}
}

func human(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%dMB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%dKB", n>>10)
	}
	return strconv.Itoa(n)
}
