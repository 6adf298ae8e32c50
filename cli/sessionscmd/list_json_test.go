package sessionscmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// TestListJSONAsEncodingJSON holds the hand-written rows of "sessions list
// --json" to what encoding/json writes of the same listJSON, over strings
// that need escaping (quotes, backslashes, controls, HTML, line and
// paragraph separators, bytes that are not UTF-8), times with and without
// fractions and in other zones, parents and none, forks and none.
func TestListJSONAsEncodingJSON(t *testing.T) {
	strs := []string{"", "plain title", "/", "a/b", "..", "/store//x/../y", `a "quoted" \\ one`, "tab\tnew\nline", "<b>&amp;</b>", "\u2028sep\u2029", "naïve 日本", "\xff\xfe bad", "\x1b[31mred", "\u007f del"}
	times := []time.Time{
		time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC),
		time.Date(2026, 3, 1, 12, 0, 0, 5, time.FixedZone("x", 3600)),
		time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	n := 0
	paths := &pather{} // one for all rows, as a chunk of the listing has
	for i, s := range strs {
		for j, at := range times {
			tot := &session.Totals{Info: session.Info{Meta: transcript.Meta{ID: "20260301T120000-" + s, CreatedAt: at, Provider: s, Model: strs[(i+1)%len(strs)], Title: s, Workspace: "/w/" + s},
				Ref: session.Ref{Dir: []string{"/store/" + s, s, "/store"}[j%3], ID: []string{"id" + s, s}[i%2]}}, Turns: i * 1000, Stop: strs[(i+j)%len(strs)]}
			if j%2 == 1 {
				tot.Meta.Parent = &transcript.ParentCall{Session: s, CallID: "toolu_" + s}
			}
			if (i+j)%3 == 0 {
				tot.Meta.ForkOf = &transcript.Fork{Session: s, Turn: i*j - 3}
			}
			r := listed{Totals: tot, kind: session.Kind(&tot.Meta)}
			m := r.Meta
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(false)
			wantErr := enc.Encode(listJSON{m.ID, m.CreatedAt.UTC(), r.kind, m.Provider, m.Model, m.Title, m.Workspace, r.Turns, r.Stop, m.Parent, m.ForkOf, r.Ref.Path()})
			got, err := appendListJSON(nil, r, paths)
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("row %q at %v: error %v, encoding/json's %v", s, at, err, wantErr)
			}
			if err == nil && string(got) != string(bytes.TrimSuffix(want.Bytes(), []byte("\n"))) {
				t.Errorf("row %q at %v:\ngot  %s\nwant %s", s, at, got, want.Bytes())
			}
			n++
		}
	}
	if n != len(strs)*len(times) {
		t.Fatal("not every row was tried")
	}
}

// TestJSONPlain holds the eight-at-a-time test to a byte-at-a-time one:
// every byte value at every place of a string longer than two words.
func TestJSONPlain(t *testing.T) {
	for c := 0; c < 256; c++ {
		for at := 0; at < 19; at++ {
			b := []byte("abcdefghijklmnopqrs")
			b[at] = byte(c)
			want := c >= 0x20 && c < 0x7f && c != '"' && c != '\\'
			if got := jsonPlain(string(b)); got != want {
				t.Fatalf("byte %#x at %d: %v, want %v", c, at, got, want)
			}
		}
	}
}

// TestAppendMinute holds the table's hand-made time to AppendFormat's,
// over times spread across the years of four digits and beyond, in zones
// east and west.
func TestAppendMinute(t *testing.T) {
	zones := []*time.Location{time.UTC, time.FixedZone("e", 5*3600+1800), time.FixedZone("w", -7*3600)}
	for i := range 20000 {
		sec := int64(i)*7919*86400 + int64(i)*4099 - 62135596800 // from year 1 on
		for _, z := range zones {
			at := time.Unix(sec, 0).In(z)
			if got, want := string(appendMinute(nil, at)), at.Format("2006-01-02 15:04"); got != want {
				t.Fatalf("%v: %q, want %q", at, got, want)
			}
		}
	}
	for _, at := range []time.Time{time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC), {}} {
		if got, want := string(appendMinute(nil, at)), at.Format("2006-01-02 15:04"); got != want {
			t.Fatalf("%v: %q, want %q", at, got, want)
		}
	}
}

// TestListInChunks: a listing of several chunks (made on every core) is
// the rows' lines in order, each as a listing of that row alone writes it
// (the rows' cells are all of one width, so the columns are the same),
// in the table and in JSON.
func TestListInChunks(t *testing.T) {
	const n = 5000
	rows := make([]listed, n)
	for i := range rows {
		tot := &session.Totals{Info: session.Info{Meta: transcript.Meta{ID: fmt.Sprintf("20260301T120000-%08x", i), CreatedAt: time.Date(2026, 3, 1, 12, 0, i, 0, time.UTC),
			Provider: "p", Model: "m", Title: fmt.Sprintf("title %d", i%10)}, Ref: session.Ref{Dir: "/s", ID: fmt.Sprintf("20260301T120000-%08x", i)}},
			Turns: 5, Stop: "end_turn", Finished: true}
		rows[i] = listed{Totals: tot, kind: session.Kind(&tot.Meta)}
	}
	for _, write := range []func(*cmdkit.Env, []listed) error{writeListTable, writeListJSON} {
		all := &bytes.Buffer{}
		if err := write(&cmdkit.Env{Out: all}, rows); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(all.String(), "\n")
		for _, i := range []int{0, 1, 1023, 1024, 1025, 2047, 2048, 4095, 4096, n - 1} {
			one := &bytes.Buffer{}
			if err := write(&cmdkit.Env{Out: one}, rows[i:i+1]); err != nil {
				t.Fatal(err)
			}
			want := strings.TrimPrefix(strings.Split(one.String(), "\n")[1], "  ")
			if got := strings.TrimSuffix(strings.TrimPrefix(lines[i+1], "  "), ","); got != want {
				t.Fatalf("row %d: %q, alone %q", i, got, want)
			}
		}
		if len(lines) != n+3 && len(lines) != n+2 {
			t.Fatalf("%d lines for %d rows", len(lines), n)
		}
	}
}
