package sessionscmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mecha-agent/mecha/internal/workdir"

	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// ListOptions are the options of "sessions list".
type ListOptions struct {
	Env   *cmdkit.Env
	JSON  bool
	Limit int
	// Workspace keeps the sessions recorded in this directory ("." is the
	// current one); "" keeps every workspace.
	Workspace string
	// Kinds keeps the sessions of these kinds (session.Kind); none keeps all.
	Kinds []string
	// Since keeps the sessions created at or after it, as given (a
	// duration back from now, or a date) and as parsed; zero keeps all.
	Since     string
	SinceTime time.Time
	// NoChildren hides subagents' child runs (meta parent), NoReplays
	// replays and reruns.
	NoChildren, NoReplays bool
	// Remote lists the index of this remote instead of the store.
	Remote string
}

// NewCmdList builds "mecha sessions list".
func NewCmdList(env *cmdkit.Env, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{Env: env}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List sessions, newest first",
		Long: `List sessions, newest first: id, creation time, kind, provider/model, turns,
why the last run stopped, and title. A session with no stop reason is
running, or died before its run finished.

The listing comes from the store's index (.index/ in the store's
directory), which every listing first checks against the transcripts: a
file that changed since it was indexed is read again from where indexing
stopped, so listing costs about the same whatever the size of the
transcripts. With -n N and no session created or removed since the last
listing, only the N sessions shown are checked.
Kinds are run, replay, rerun, reflection, serve (mcp serve), proxy
(mcp proxy) and imported; --kind takes several, comma-separated or repeated.
A session's kind comes from its header (replay_of, rerun_of, imported_from,
reflects_on or distill, and the mcp provider for serve and proxy).
--no-replays hides replays and reruns (sessions that redo another one),
--no-children the child runs subagents start.

--remote NAME lists the sessions pushed to a remote instead, from the index
object every push keeps current (one request however many sessions): id,
creation time, kind, provider/model, size, who pushed it and title.`,
		Example: `  mecha sessions list --workspace .          # sessions of this directory
  mecha sessions list --kind run --since 7d  # this week's own runs
  mecha sessions list --no-replays --no-children -n 20
  mecha sessions list --since 2026-11-01 --json`,
		Args: cmdkit.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := validateList(opts); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			if cmd.Flags().Changed("remote") {
				return listRemote(cmd.Context(), opts)
			}
			return listRun(opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.JSON, "json", false, "print a JSON array of {id, created_at, kind, provider, model, title, workspace, turns, stop_reason, parent, fork_of, path}")
	f.IntVarP(&opts.Limit, "limit", "n", 0, "show only the newest `N` sessions kept (0: all)")
	f.StringVarP(&opts.Workspace, "workspace", "w", "", "only sessions recorded in workspace `DIR` (. for this directory; symbolic links resolved)")
	f.StringSliceVar(&opts.Kinds, "kind", nil, "only sessions of these `kinds`: "+strings.Join(session.Kinds, ", "))
	f.StringVar(&opts.Since, "since", "", "only sessions created since `WHEN`: a duration back from now (7d, 36h, 90m, 2w) or a date (2026-11-01, 2026-11-01T15:04, RFC 3339)")
	f.BoolVar(&opts.NoChildren, "no-children", false, "hide child runs started by another session (meta parent)")
	f.BoolVar(&opts.NoReplays, "no-replays", false, "hide replays and reruns")
	f.StringVar(&opts.Remote, "remote", "", "list the sessions on remote `NAME` (from its index: one request), with --kind, --since, -n and --json")
	return cmd
}

func validateList(opts *ListOptions) error {
	if opts.Limit < 0 {
		return cmdkit.Usagef("--limit must not be negative")
	}
	for _, k := range opts.Kinds {
		if !slices.Contains(session.Kinds, k) {
			return cmdkit.Usagef("--kind %q is not a kind (want one of %s)", k, strings.Join(session.Kinds, ", "))
		}
		if opts.NoReplays && (k == session.KindReplay || k == session.KindRerun) {
			return cmdkit.Usagef("--no-replays hides the %ss --kind %s asks for", k, k)
		}
	}
	if opts.Since != "" {
		t, err := parseSince(opts.Since, opts.Env.Clock.Now(), opts.Env.Zone())
		if err != nil {
			return cmdkit.Usagef("--since: %v", err)
		}
		opts.SinceTime = t
	}
	return nil
}

// parseSince reads --since: a duration back from now (Go's units, plus d
// for days and w for weeks, which may be combined: 1d12h) or a date or a
// time in zone (RFC 3339 carries its own).
func parseSince(s string, now time.Time, zone *time.Location) (time.Time, error) {
	if d, ok := parseAgo(s); ok {
		if d < 0 {
			return time.Time{}, fmt.Errorf("%q is a negative duration", s)
		}
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02T15:04:05"} {
		if t, err := time.ParseInLocation(layout, s, zone); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is neither a duration (7d, 36h, 90m) nor a date (2026-11-01)", s)
}

// parseAgo parses a duration whose leading part may be in weeks and days.
func parseAgo(s string) (time.Duration, bool) {
	var total time.Duration
	rest := s
	for _, unit := range []struct {
		suffix byte
		d      time.Duration
	}{{'w', 7 * 24 * time.Hour}, {'d', 24 * time.Hour}} {
		i := strings.IndexByte(rest, unit.suffix)
		if i <= 0 {
			continue
		}
		var n int
		if _, err := fmt.Sscanf(rest[:i], "%d", &n); err != nil || fmt.Sprint(n) != rest[:i] || n > 100000 {
			return 0, false
		}
		total += time.Duration(n) * unit.d
		rest = rest[i+1:]
	}
	if rest == "" {
		return total, rest != s
	}
	d, err := time.ParseDuration(rest)
	if err != nil {
		return 0, false
	}
	return total + d, true
}

// keep is the header filter of the options, applied before the rest of a
// transcript is read (nil keeps all).
func (opts *ListOptions) keep() (func(transcript.Meta) bool, error) {
	var sameWS func(string) bool
	if opts.Workspace != "" {
		var err error
		if sameWS, err = workdir.Same(opts.Workspace); err != nil {
			return nil, err
		}
	}
	if sameWS == nil && len(opts.Kinds) == 0 && opts.SinceTime.IsZero() && !opts.NoChildren && !opts.NoReplays {
		return nil, nil
	}
	return func(m transcript.Meta) bool {
		switch k := session.Kind(&m); {
		case len(opts.Kinds) > 0 && !slices.Contains(opts.Kinds, k),
			opts.NoReplays && (k == session.KindReplay || k == session.KindRerun),
			opts.NoChildren && m.Parent != nil,
			!opts.SinceTime.IsZero() && m.CreatedAt.Before(opts.SinceTime),
			sameWS != nil && !sameWS(m.Workspace):
			return false
		}
		return true
	}, nil
}

// listed is one row of the listing.
type listed struct {
	*session.Totals
	kind string
}

type listJSON struct {
	ID         string                 `json:"id"`
	CreatedAt  time.Time              `json:"created_at"`
	Kind       string                 `json:"kind"`
	Provider   string                 `json:"provider"`
	Model      string                 `json:"model"`
	Title      string                 `json:"title"`
	Workspace  string                 `json:"workspace"`
	Turns      int                    `json:"turns"`
	StopReason string                 `json:"stop_reason"`
	Parent     *transcript.ParentCall `json:"parent"`
	ForkOf     *transcript.Fork       `json:"fork_of"`
	Path       string                 `json:"path"`
}

func listRun(opts *ListOptions) error {
	store, err := opts.Env.Store()
	if err != nil {
		return err
	}
	keep, err := opts.keep()
	if err != nil {
		return err
	}
	// Listing allocates a little per session and keeps nearly all of it,
	// so a collection frees nothing and slows the decoding it runs beside
	// (write barriers): collect far less often while it runs. The heap
	// stays small, a few hundred bytes a session; at 800 a listing of
	// 100,000 sessions still ran one collection (53 MB to 51 MB) and spent
	// a fifth more CPU (perf stat, 9 alternating runs, same peak RSS).
	defer opts.Env.TuneGC(4000)()
	// Each header is filtered as it is read; the sessions shown are read
	// on for their totals, usually from their last line alone.
	read, skipped, err := store.Totals(keep, opts.Limit)
	if err != nil {
		return err
	}
	opts.Env.NoteSkipped(skipped)
	rows := make([]listed, 0, len(read))
	for i := range read {
		s := &read[i]
		opts.Env.NoteForeignID(s.Ref, s.HeaderID)
		rows = append(rows, listed{Totals: s, kind: session.Kind(&s.Meta)})
	}
	if opts.JSON {
		return writeListJSON(opts.Env, rows)
	}
	if len(rows) == 0 {
		what := "no sessions"
		if keep != nil {
			what = "no sessions match"
		}
		fmt.Fprintf(opts.Env.Err, "%s in %s\n", what, store.Dir)
		return nil
	}
	return writeListTable(opts.Env, rows)
}

// writeListJSON writes an array with one compact object per line: as easy
// to read and to grep as indented JSON, and cheap for a hundred thousand
// sessions (each row is written by hand, as encoding/json would write
// listJSON; TestListJSONAsEncodingJSON holds the two together).
func writeListJSON(env *cmdkit.Env, rows []listed) error {
	jw := textfmt.JSONWriter(env.Out) // the JSON, inert on a terminal
	defer jw.Close()
	w := bufio.NewWriterSize(jw, 256<<10)
	w.WriteString("[")
	// The rows are made in chunks on every core, written in order.
	const chunk = 2048
	chunks := make([][]byte, (len(rows)+chunk-1)/chunk)
	errs := make([]error, len(chunks))
	session.Parallel(len(chunks), func(c int) {
		b := make([]byte, 0, 320*chunk)
		paths := pather{}
		for i := c * chunk; i < min(len(rows), (c+1)*chunk); i++ {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, "\n  "...)
			if b, errs[c] = appendListJSON(b, rows[i], &paths); errs[c] != nil {
				return
			}
		}
		chunks[c] = b
	})
	for c := range chunks {
		if errs[c] != nil {
			return errs[c]
		}
		w.Write(chunks[c])
		chunks[c] = nil
	}
	if len(rows) > 0 {
		w.WriteString("\n")
	}
	w.WriteString("]\n")
	return w.Flush()
}

// pather makes sessions' paths as session.Ref.Path does, without cleaning
// each one when their directory is clean.
type pather struct {
	dir          string
	clean, plain bool // the directory is clean; and a plain JSON string
}

func (p *pather) path(r session.Ref) string {
	if !p.simple(r) {
		return r.Path()
	}
	return r.Dir + "/" + r.ID + session.Ext
}

// simple says the path of r is its directory, a slash and its file's name.
func (p *pather) simple(r session.Ref) bool {
	if r.Dir != p.dir {
		p.dir = r.Dir
		p.clean = r.Dir != "" && r.Dir != "/" && filepath.Clean(r.Dir) == r.Dir
		p.plain = jsonPlain(r.Dir)
	}
	return p.clean && r.ID != "" && r.ID != "." && r.ID != ".." && !strings.ContainsRune(r.ID, '/')
}

// appendPath appends the path of r as a JSON string.
func (p *pather) appendPath(b []byte, r session.Ref) []byte {
	if !p.simple(r) || !p.plain || !jsonPlain(r.ID) {
		return appendJSONString(b, p.path(r))
	}
	b = append(b, '"')
	b = append(b, r.Dir...)
	b = append(b, '/')
	b = append(b, r.ID...)
	b = append(b, session.Ext...)
	return append(b, '"')
}

// appendListJSON appends the row as encoding/json writes its listJSON
// (HTML left unescaped), without the newline.
func appendListJSON(b []byte, r listed, paths *pather) ([]byte, error) {
	m := &r.Meta
	at := m.CreatedAt.UTC()
	if y := at.Year(); y < 0 || y > 9999 {
		return appendEncoded(b, listJSON{m.ID, at, r.kind, m.Provider, m.Model, m.Title, m.Workspace, r.Turns, r.Stop, m.Parent, m.ForkOf, r.Ref.Path()})
	}
	b = append(b, `{"id":`...)
	b = appendJSONString(b, m.ID)
	b = append(b, `,"created_at":"`...)
	b = at.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","kind":`...)
	b = appendJSONString(b, r.kind)
	b = append(b, `,"provider":`...)
	b = appendJSONString(b, m.Provider)
	b = append(b, `,"model":`...)
	b = appendJSONString(b, m.Model)
	b = append(b, `,"title":`...)
	b = appendJSONString(b, m.Title)
	b = append(b, `,"workspace":`...)
	b = appendJSONString(b, m.Workspace)
	b = append(b, `,"turns":`...)
	b = strconv.AppendInt(b, int64(r.Turns), 10)
	b = append(b, `,"stop_reason":`...)
	b = appendJSONString(b, r.Stop)
	b = append(b, `,"parent":`...)
	if m.Parent == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"session":`...)
		b = appendJSONString(b, m.Parent.Session)
		b = append(b, `,"call_id":`...)
		b = appendJSONString(b, m.Parent.CallID)
		b = append(b, '}')
	}
	b = append(b, `,"fork_of":`...)
	if m.ForkOf == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"session":`...)
		b = appendJSONString(b, m.ForkOf.Session)
		b = append(b, `,"turn":`...)
		b = strconv.AppendInt(b, int64(m.ForkOf.Turn), 10)
		b = append(b, '}')
	}
	b = append(b, `,"path":`...)
	b = paths.appendPath(b, r.Ref)
	return append(b, '}'), nil
}

// appendJSONString appends s as a JSON string: printable ASCII but for the
// quote and the backslash as it is, anything else through encoding/json.
func appendJSONString(b []byte, s string) []byte {
	if !jsonPlain(s) {
		b, _ = appendEncoded(b, s)
		return b
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// jsonPlain says s is printable ASCII with no quote or backslash: a JSON
// string as it is. Eight bytes at a time: a word has a byte below 0x20,
// at or above 0x7f, or equal to '"' or '\\' when one of these tests sets
// that byte's top bit (each exact for whether any byte does).
func jsonPlain(s string) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		q, bs := w^(ones*'"'), w^(ones*'\\')
		if ((w-ones*0x20)&^w|((w+ones)|w)|(q-ones)&^q|(bs-ones)&^bs)&highs != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// appendEncoded appends v as encoding/json writes it, HTML unescaped.
func appendEncoded(b []byte, v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return b, err
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}
