package sessionview_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/mecha-agent/mecha/record/pricing"
	"github.com/mecha-agent/mecha/record/sessionview"
	viewhtml "github.com/mecha-agent/mecha/record/sessionview/html"
)

// The shapes benchmarked: a transcript whose lines are a few KB (tool
// results of 1-3 KB, as most calls return) and one whose every result is
// 64 KB (large file reads). Each is about $MECHA_VIEW_MB megabytes (32 by
// default). With $MECHA_BENCH_DIR set they are written there once and
// kept, so the same files can be measured from outside (peak RSS of the
// binary); otherwise they go to a temporary directory.
var shapes = []struct {
	name string
	opts genOptions
}{
	{"lines=2KB", genOptions{ResultLen: 2 << 10, Plain: true}},
	{"lines=64KB", genOptions{ResultLen: 64 << 10, Exact: true, Plain: true}},
}

func shapeFile(b *testing.B, name string, o genOptions) string {
	return shapeFileMB(b, name, o, 32)
}

// shapeFileMB is shapeFile with another default size.
func shapeFileMB(b *testing.B, name string, o genOptions, mb int) string {
	b.Helper()
	if n, err := strconv.Atoi(os.Getenv("MECHA_VIEW_MB")); err == nil && n > 0 {
		mb = n
	}
	dir := os.Getenv("MECHA_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, fmt.Sprintf("view-%s-%dMB.jsonl", name, mb))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	// Exchanges average 1.5 calls; find how many make the size.
	probe := filepath.Join(b.TempDir(), "probe.jsonl")
	o.Exchanges = 200
	generate(b, probe, 1, o)
	st, _ := os.Stat(probe)
	o.Exchanges = int(int64(mb<<20) * 200 / st.Size())
	generate(b, path+".tmp", 1, o)
	if err := os.Rename(path+".tmp", path); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkShow builds the view and renders it as text and JSON, each to
// io.Discard; in the same run, the baselines: the show of before
// sessionview (load everything, then render) and jq -c . over the file.
func BenchmarkShow(b *testing.B) {
	in, out := 15.0, 75.0
	prices := pricing.Table{"anthropic": {"*": {Input: in, Output: out}}}
	for _, sh := range shapes {
		path := shapeFile(b, sh.name, sh.opts)
		st, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		run := func(name string, f func() error) {
			b.Run(sh.name+"/"+name, func(b *testing.B) {
				b.SetBytes(st.Size())
				b.ReportAllocs()
				for b.Loop() {
					if err := f(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		run("build", func() error {
			_, err := sessionview.Stream(path, prices, func(sessionview.Item) error { return nil })
			return err
		})
		run("text", func() error {
			return sessionview.WriteText(io.Discard, path, prices, sessionview.TextOptions{})
		})
		run("text-full", func() error {
			return sessionview.WriteText(io.Discard, path, prices, sessionview.TextOptions{Full: true})
		})
		run("json", func() error { return sessionview.WriteJSON(io.Discard, path, prices) })
		run("old-text", func() error { return sessionview.OracleShow(io.Discard, path, prices, false, false, false) })
		run("old-json", func() error { return sessionview.OracleShow(io.Discard, path, prices, true, false, false) })
		run("html", func() error { return viewhtml.Write(io.Discard, path, prices, viewhtml.Options{}) })
		if _, err := exec.LookPath("jq"); err == nil {
			run("jq-c", func() error {
				cmd := exec.Command("jq", "-c", ".", path)
				cmd.Stdout = io.Discard
				return cmd.Run()
			})
		}
	}
}

// BenchmarkView writes the HTML page of a 100 MB transcript (of each
// shape; $MECHA_VIEW_MB changes the size) to io.Discard, with the same
// run's baselines: sessions show as text and as JSON, and the Markdown
// export.
func BenchmarkView(b *testing.B) {
	in, out := 15.0, 75.0
	prices := pricing.Table{"anthropic": {"*": {Input: in, Output: out}}}
	for _, sh := range shapes {
		path := shapeFileMB(b, sh.name, sh.opts, 100)
		st, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range []struct {
			name string
			f    func() error
		}{
			{"html", func() error { return viewhtml.Write(io.Discard, path, prices, viewhtml.Options{}) }},
			{"show", func() error { return sessionview.WriteText(io.Discard, path, prices, sessionview.TextOptions{}) }},
			{"show-json", func() error { return sessionview.WriteJSON(io.Discard, path, prices) }},
			{"md", func() error {
				return sessionview.WriteMarkdown(io.Discard, path, prices, sessionview.MarkdownOptions{})
			}},
		} {
			b.Run(sh.name+"/"+r.name, func(b *testing.B) {
				b.SetBytes(st.Size())
				b.ReportAllocs()
				for b.Loop() {
					if err := r.f(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
