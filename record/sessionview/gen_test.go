package sessionview_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/record/transcript"
)

// genOptions shape a generated transcript.
type genOptions struct {
	Exchanges int  // assistant/results exchanges
	ResultLen int  // bytes of a typical tool result
	Exact     bool // every successful result exactly ResultLen bytes
	Odd       bool
	// Plain writes text like source code (ASCII, a newline every few
	// dozen bytes, tabs and quotes) instead of text full of escapes.
	Plain bool
}

// generate writes a transcript shaped like real runs: attaches with
// changing configs, prompts, parallel calls answered in shuffled order,
// steering, errors and denials, thinking, checkpoints, summaries and
// compactions. With Odd it adds what only damaged or foreign files hold:
// unknown blocks and records, orphan results, unanswered calls, garbage,
// blank lines and a torn final line. Files follow the harness's protocol
// (every result arrives before the model's next message), where the old
// and new pairing agree.
func generate(tb testing.TB, path string, seed uint64, o genOptions) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(seed, 1))
	at := time.Date(2026, 8, 5, 9, 15, 0, 0, time.UTC)
	tick := func() time.Time { at = at.Add(time.Duration(rng.IntN(5000)) * time.Millisecond); return at }
	put := func(r transcript.Record) {
		line, err := transcript.Encode(r)
		if err != nil {
			tb.Fatal(err)
		}
		w.Write(line)
	}
	models := [][2]string{{"anthropic", "claude-opus-5"}, {"local", "qwen3"}, {"openai", "gpt-x"}}
	put(&transcript.Meta{Format: 1, ID: fmt.Sprintf("20260805T091500-%08x", seed), CreatedAt: at, Provider: "anthropic",
		Model: "claude-opus-5", Workspace: "/home/you/project", Title: "  summarize\nwhat  changed ", ReplayOf: pick(rng, "", "", "20260101T000000-00000000")})
	text := func(n int) string {
		words := []string{"package", "main", "func", "<b>", "&amp;", "naïve", "日本語", "\u2028", "\t", "x", "return", "\"q\"", `\`}
		if o.Plain {
			words = []string{"\tif", "err", "!=", "nil", "{", "}", "return", ":=", "fmt.Errorf(\"read %s: %w\",", "path,", "x)", "//", "the", "file", "func", "(r", "*Reader)", "Next()", "\t\t", "0", "len(b)"}
		}
		var sb strings.Builder
		for sb.Len() < n {
			sb.WriteString(words[rng.IntN(len(words))])
			if rng.IntN(7) == 0 {
				sb.WriteByte('\n')
			} else {
				sb.WriteByte(' ')
			}
		}
		return sb.String()
	}
	config := func() *transcript.Config {
		m := models[rng.IntN(len(models))]
		c := &transcript.Config{MechaVersion: pick(rng, "0.1.0", "0.2.0"), Provider: m[0], Model: m[1], Workspace: "/home/you/project",
			Tools: []string{"fs_read", "fs_list"}, CachePrompt: rng.IntN(2) == 0, Thinking: rng.IntN(3) == 0,
			MaxTokens: 8192, MaxTurns: 20 + 20*rng.IntN(2), CompactKeepRecent: 6, PermissionMode: pick(rng, "ask", "yes", "read-only"),
			Trifecta: "refuse", Sandbox: pick(rng, "none", "landlock"), SandboxNetwork: rng.IntN(2) == 0}
		if rng.IntN(2) == 0 {
			p := "You are mecha.\nBe brief. " + text(rng.IntN(300))
			c.SystemPrompt = &p
		}
		if rng.IntN(2) == 0 {
			c.Tools = append(c.Tools, "shell")
		}
		if rng.IntN(2) == 0 {
			t := 0.7
			c.Temperature = &t
			s := uint64(18446744073709551557)
			c.Seed = &s
			e := "high"
			c.Effort = &e
			mo := uint64(100000)
			c.MaxOutputTokens = &mo
			usd := 2.5
			c.MaxCostUSD = &usd
			ca := uint64(50000)
			c.CompactAtTokens = &ca
		}
		if rng.IntN(2) == 0 {
			c.At = tick()
		}
		return c
	}
	messages := 0
	msg := func(role string, blocks ...transcript.Block) {
		m := &transcript.Message{Role: role, Content: blocks}
		if rng.IntN(4) != 0 {
			m.At = tick()
		}
		put(m)
		messages++
	}
	var last transcript.Config
	config0 := config
	config = func() *transcript.Config { c := config0(); last = *c; return c }
	put(config())
	id := 0
	for ex := 0; ex < o.Exchanges; ex++ {
		if ex%5 == 0 {
			switch {
			case ex > 0 && rng.IntN(3) == 0:
				put(config())
			case ex > 0 && rng.IntN(3) == 0:
				put(&last) // resumed under the same settings
			}
			var blocks []transcript.Block
			for range 1 + rng.IntN(2) {
				blocks = append(blocks, transcript.TextBlock(text(rng.IntN(200))))
			}
			if o.Odd && rng.IntN(4) == 0 {
				blocks = append(blocks, transcript.TextBlock(""))
			}
			msg(transcript.RoleUser, blocks...)
		}
		var blocks []transcript.Block
		if rng.IntN(3) == 0 {
			blocks = append(blocks, transcript.Block{Type: transcript.BlockThinking, Thinking: text(rng.IntN(400)), Signature: "sig"})
		}
		if rng.IntN(2) == 0 {
			blocks = append(blocks, transcript.TextBlock(text(rng.IntN(300))))
		}
		if o.Odd && rng.IntN(6) == 0 {
			blocks = append(blocks, transcript.Block{Type: "server_tool_use", Raw: json.RawMessage(`{"type":"server_tool_use","id":"s1"}`)})
		}
		var calls []transcript.Block
		for range rng.IntN(4) {
			id++
			in := json.RawMessage(fmt.Sprintf(`{"path":"src/file%d.go","limit":%d, "note":%q}`, id, rng.IntN(100), text(rng.IntN(400))))
			calls = append(calls, transcript.ToolUseBlock(fmt.Sprintf("toolu_%d", id), pick(rng, "fs_read", "fs_list", "shell"), in))
		}
		blocks = append(blocks, calls...)
		if len(blocks) == 0 {
			blocks = append(blocks, transcript.TextBlock("done"))
		}
		msg(transcript.RoleAssistant, blocks...)
		if len(calls) == 0 {
			continue
		}
		var results []transcript.Block
		for _, i := range rng.Perm(len(calls)) {
			c := calls[i]
			if o.Odd && rng.IntN(10) == 0 {
				continue // never answered
			}
			switch rng.IntN(8) {
			case 0:
				results = append(results, transcript.ToolResultBlock(c.ID, pick(rng, "denied by the user",
					"denied: shell runs commands and the run is in read-only mode", "no such file: x"), true))
			case 1:
				results = append(results, transcript.ToolResultBlock(c.ID, "", false))
			default:
				n := o.ResultLen/2 + rng.IntN(o.ResultLen+1)
				if o.Exact {
					n = o.ResultLen
				}
				results = append(results, transcript.ToolResultBlock(c.ID, strings.ToValidUTF8(text(n)[:n], ""), false))
			}
		}
		if o.Odd && rng.IntN(8) == 0 {
			results = append(results, transcript.ToolResultBlock("toolu_nobody", "an orphan", false))
		}
		if rng.IntN(6) == 0 {
			results = append(results, transcript.TextBlock("also look at the README"))
		}
		if len(results) > 0 {
			msg(transcript.RoleUser, results...)
		}
		if rng.IntN(4) == 0 {
			put(&transcript.Taint{Private: rng.IntN(2) == 0, Untrusted: rng.IntN(3) == 0, At: tick()})
		}
		if rng.IntN(5) == 0 {
			m := models[rng.IntN(len(models))]
			s := &transcript.Summary{Usage: transcript.Usage{InputTokens: uint64(rng.IntN(100000)), OutputTokens: uint64(rng.IntN(5000)),
				CacheReadTokens: uint64(rng.IntN(1000)), CacheWriteTokens: uint64(rng.IntN(1000))}, Turns: rng.IntN(4)}
			if rng.IntN(3) != 0 {
				s.Provider, s.Model = m[0], m[1]
			}
			if rng.IntN(2) == 0 {
				s.StopReason = pick(rng, "end_turn", "max_turns", "error")
			}
			if rng.IntN(5) == 0 {
				s.Error = "provider: 529\noverloaded"
			}
			put(s)
		}
		if rng.IntN(15) == 0 {
			put(&transcript.Compaction{Replaces: rng.IntN(messages + 1), Summary: text(300), Usage: transcript.Usage{InputTokens: 9000, OutputTokens: 400}})
		}
		if o.Odd {
			switch rng.IntN(20) {
			case 0:
				w.WriteString(`{"record":"reflection","note":"from the future"}` + "\n")
			case 1:
				w.WriteString("not json\n")
			case 2:
				w.WriteString("\n")
			}
		}
	}
	if o.Odd {
		w.WriteString(`{"record":"message","role":"assistant","content":[{"type":"text","text":"cut of`)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

func pick[T any](rng *rand.Rand, vs ...T) T { return vs[rng.IntN(len(vs))] }
