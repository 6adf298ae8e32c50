package root

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/cli/cmdkit"
)

// BenchmarkSessionsSearch compares "mecha sessions search" (in-process:
// parsing, listing, searching, formatting) with grep -rF, and rg -F where
// it is installed, for the same literal over a generated store of
// $MECHA_SEARCH_SESSIONS (default 2,000) sessions of about 100 KB each,
// built in the benchmark's temporary directory. The commands run
// interleaved on a warm page cache; it reports the median of each and
// mecha's ratio to the fastest baseline. The needle is in 1% of sessions.
func BenchmarkSessionsSearch(b *testing.B) {
	n := 2000
	if s := os.Getenv("MECHA_SEARCH_SESSIONS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	dir := b.TempDir()
	genSearchStore(b, dir, n, 100<<10)
	const needle = "quokka-zebra-1729"
	env := &cmdkit.Env{Out: io.Discard, Err: io.Discard, Vars: func(k string) string {
		if k == "MECHA_SESSION_DIR" {
			return dir
		}
		return ""
	}}
	var baselines [][]string
	baselines = append(baselines, []string{"grep", "-rF", "--", needle, dir})
	if _, err := exec.LookPath("rg"); err == nil {
		baselines = append(baselines, []string{"rg", "-F", "--no-messages", "--", needle, dir})
	}
	// Both must find the same: one match in each of n/100 sessions.
	var out strings.Builder
	check := *env
	check.Out = &out
	if code := Run(context.Background(), &check, []string{"sessions", "search", "--json", needle}); code != 0 {
		b.Fatalf("exit %d", code)
	}
	grepped, err := exec.Command("grep", "-rcF", "--", needle, dir).Output()
	if err != nil {
		b.Fatal(err)
	}
	if got, want := strings.Count(out.String(), "\n"), strings.Count(string(grepped), ":1\n"); got != want || want != n/100 {
		b.Fatalf("mecha found %d matches, grep %d lines, want %d", got, want, n/100)
	}
	times := make([][]time.Duration, 1+len(baselines))
	for b.Loop() {
		t0 := time.Now()
		if code := Run(context.Background(), env, []string{"sessions", "search", needle}); code != 0 {
			b.Fatalf("exit %d", code)
		}
		times[0] = append(times[0], time.Since(t0))
		for i, argv := range baselines {
			cmd := exec.Command(argv[0], argv[1:]...)
			t0 := time.Now()
			if err := cmd.Run(); err != nil {
				b.Fatalf("%s: %v", argv[0], err)
			}
			times[i+1] = append(times[i+1], time.Since(t0))
		}
	}
	mecha := median(times[0])
	best := time.Duration(0)
	b.ReportMetric(float64(mecha.Milliseconds()), "mecha-ms")
	for i, argv := range baselines {
		m := median(times[i+1])
		b.ReportMetric(float64(m.Milliseconds()), argv[0]+"-ms")
		if best == 0 || m < best {
			best = m
		}
	}
	b.ReportMetric(float64(mecha)/float64(best), "x-baseline")
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// genSearchStore writes n sessions of about size bytes each: user and
// assistant text, tool calls with inputs and results of a few KB, as a
// run writes them. One session in a hundred holds the needle once.
func genSearchStore(b *testing.B, dir string, n, size int) {
	b.Helper()
	words := strings.Fields("the of and a to in is you that it he was for on are as with his they I at be this have from or one had by word but not what all were we when your can said there use an each which she do how their if will up other about out many then them these so some her would make like him into time has look two more write go see number no way could people my than first water been call who oil its now find long down day did get come made may part")
	r := rand.New(rand.NewPCG(1, 2))
	text := func(nw int) string {
		var sb strings.Builder
		for i := range nw {
			if i > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(words[r.IntN(len(words))])
		}
		return sb.String()
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		at := base.Add(time.Duration(i) * time.Minute)
		id := fmt.Sprintf("%s-%08x", at.Format("20060102T150405"), i)
		var sb strings.Builder
		fmt.Fprintf(&sb, `{"record":"meta","format":1,"id":%q,"created_at":%q,"provider":"mock","model":"m","workspace":"/w","title":%q}`+"\n", id, at.Format(time.RFC3339), text(6))
		sb.WriteString(`{"record":"config","tools":[{"name":"read_file"},{"name":"bash"}]}` + "\n")
		for call := 0; sb.Len() < size; call++ {
			fmt.Fprintf(&sb, `{"record":"message","role":"user","content":[{"type":"text","text":%q}]}`+"\n", text(40))
			fmt.Fprintf(&sb, `{"record":"message","role":"assistant","content":[{"type":"text","text":%q},{"type":"tool_use","id":"t%d","name":"bash","input":{"command":%q}}]}`+"\n", text(60), call, "grep -n "+text(3))
			result := text(600)
			if i%100 == 7 && call == 3 {
				result += " quokka-zebra-1729 " + text(5)
			}
			fmt.Fprintf(&sb, `{"record":"message","role":"user","content":[{"type":"tool_result","tool_use_id":"t%d","content":%q}]}`+"\n", call, result)
		}
		sb.WriteString(`{"record":"summary","usage":{"input_tokens":1000,"output_tokens":200,"cache_read_tokens":0,"cache_write_tokens":0},"turns":2}` + "\n")
		if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), []byte(sb.String()), 0o600); err != nil {
			b.Fatal(err)
		}
	}
}
