package sessionscmd

import (
	"bufio"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/spf13/cobra"
)

// SearchOptions are the options of "sessions search".
type SearchOptions struct {
	Env   *cmdkit.Env
	Query string
	Regex bool
	Role  string
	Tool  string
	Days  int
	Limit int
	JSON  bool
}

// NewCmdSearch builds "mecha sessions search".
func NewCmdSearch(env *cmdkit.Env, runF func(*SearchOptions) error) *cobra.Command {
	opts := &SearchOptions{Env: env}
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Search the text of every session, newest first",
		Long: `Search what a person would search in every transcript: message text,
reflections, the values of tool inputs, tool results and compaction summaries
(never JSON keys, headers or configs). Sessions are searched newest first and
matches printed as they are found: the session id and title, the record's line
in the transcript, the role (user, assistant, or the tool) and a snippet with
the match marked (in colour on a terminal, »between these« elsewhere; control
characters from a transcript shown escaped). A literal query is case-sensitive; --regex takes Go's syntax
((?i) for any case). The store's index (.index/, kept in step with the
transcripts by every reader) names the lines holding every three-character run
of the literal, or of the literal runs a regex requires, and each is verified
on the transcript itself; a query with no such run (shorter than three
characters, or a case-insensitive regex) reads every transcript.`,
		Args: cmdkit.ExactArgs(1, "one query"),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.Query = args[0]
			switch {
			case opts.Query == "":
				return cmdkit.Usagef("the query must not be empty")
			case opts.Role != "" && opts.Role != "user" && opts.Role != "assistant" && opts.Role != "tool":
				return cmdkit.Usagef("--role must be user, assistant or tool, not %q", opts.Role)
			case opts.Tool != "" && opts.Role != "" && opts.Role != "tool":
				return cmdkit.Usagef("--tool matches only tool inputs and results: it cannot go with --role %s", opts.Role)
			case opts.Days < 0:
				return cmdkit.Usagef("--days must not be negative")
			case opts.Limit < 0:
				return cmdkit.Usagef("-n must not be negative")
			}
			if runF != nil {
				return runF(opts)
			}
			return searchRun(opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.Regex, "regex", false, "the query is a regular expression (Go syntax)")
	f.StringVar(&opts.Role, "role", "", "only text of `ROLE`: user, assistant or tool (tool inputs and results)")
	f.StringVar(&opts.Tool, "tool", "", "only the inputs and results of the tool `NAME`")
	f.IntVar(&opts.Days, "days", 0, "only sessions created in the last `N` days (0: all)")
	f.IntVarP(&opts.Limit, "limit", "n", 0, "stop after `N` matches (0: all)")
	f.BoolVar(&opts.JSON, "json", false, "print one JSON object per match, one per line")
	return cmd
}

// searchHit is one match as --json prints it.
type searchHit struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Line    int    `json:"line"`
	Role    string `json:"role"`
	Tool    string `json:"tool,omitempty"`
	Part    string `json:"part"`
	Snippet string `json:"snippet"`
	// Match is where the match is in Snippet, in bytes.
	Match [2]int `json:"match"`
	Path  string `json:"path"`
}

// sessionHits are the matches in one session, handed from a worker to
// the printer.
type sessionHits struct {
	hits []searchHit
	err  error
	done chan struct{}
}

func searchRun(opts *SearchOptions) error {
	q, err := newQuery(opts)
	if err != nil {
		return err
	}
	store, err := opts.Env.Store()
	if err != nil {
		return err
	}
	// Searching allocates a little per session and keeps all of it:
	// collect less often while it runs.
	defer opts.Env.TuneGC(800)()
	// The index narrows the search to the sessions and lines that may
	// match (every line verified on the file); without it every
	// transcript is read.
	narrowed, ok, err := store.Candidates(q)
	if err != nil {
		return err
	}
	var infos []session.Info
	var cands map[string][]session.Span
	if ok {
		opts.Env.NoteSkipped(narrowed.NotSessions)
		keep := createdSince(opts.Env.Clock.Now(), opts.Days)
		for _, in := range narrowed.Sessions {
			if (keep == nil || keep(in.Meta)) && store.Holds(in.Ref) {
				infos = append(infos, in)
			}
		}
		cands = narrowed.Lines
	} else if infos, err = searchable(opts, store); err != nil {
		return err
	}
	// Sessions are searched in parallel and printed in order, each as
	// soon as it and every newer one are done.
	results := make([]sessionHits, len(infos))
	for i := range results {
		results[i].done = make(chan struct{})
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	searchAll(&wg, &stop, store, infos, cands, results, q, opts.Limit)
	defer wg.Wait()
	defer stop.Store(true)
	out := opts.Env.Out
	if opts.JSON {
		jw := textfmt.JSONWriter(out) // the JSON, inert on a terminal
		defer jw.Close()
		out = jw
	}
	w := bufio.NewWriterSize(out, 64<<10)
	st := cmdkit.NewStyle(opts.Env)
	printed := 0
	for i := range results {
		r := &results[i]
		<-r.done
		if r.err != nil {
			fmt.Fprintf(opts.Env.Err, "mecha: %v\n", r.err)
		}
		for j, h := range r.hits {
			if opts.Limit > 0 && printed == opts.Limit {
				break
			}
			printed++
			if err := printHit(w, st, opts.JSON, j == 0, h); err != nil {
				return err
			}
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if opts.Limit > 0 && printed == opts.Limit {
			break
		}
	}
	if printed == 0 && !opts.JSON {
		fmt.Fprintln(opts.Env.Err, "no matches")
	}
	return w.Flush()
}

// searchable lists the sessions of the store to search, newest first,
// within --days.
func searchable(opts *SearchOptions, store *session.Store) ([]session.Info, error) {
	l, err := store.List()
	if err != nil {
		return nil, err
	}
	opts.Env.NoteSkipped(l.NotSessions)
	keep := createdSince(opts.Env.Clock.Now(), opts.Days)
	var infos []session.Info
	for _, s := range l.Sessions {
		if keep == nil || keep(s.Meta) {
			infos = append(infos, s)
		}
	}
	return infos, nil
}

// searchAll searches the sessions on one worker per core, closing each
// result's done as it finishes; stop ends the work early.
// With cands, only the lines it names are read, each session's from the
// index's candidates.
func searchAll(wg *sync.WaitGroup, stop *atomic.Bool, store *session.Store, infos []session.Info, cands map[string][]session.Span, results []sessionHits, q *session.Query, limit int) {
	var next atomic.Int64
	for range min(runtime.GOMAXPROCS(0), len(infos)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(infos) {
					return
				}
				r := &results[i]
				if !stop.Load() {
					s := infos[i]
					fn := func(h session.Hit) bool {
						r.hits = append(r.hits, toHit(s, h))
						return !stop.Load() && (limit == 0 || len(r.hits) < limit)
					}
					if cands != nil {
						r.err = store.SearchLines(s.Ref, q, cands[s.Ref.ID], fn)
					} else {
						r.err = store.Search(s.Ref, q, fn)
					}
				}
				close(r.done)
			}
		}()
	}
}

// printHit writes one match: a JSON line, or a line of text under its
// session's heading (first is true for the session's first match).
func printHit(w *bufio.Writer, st textfmt.Style, asJSON, first bool, h searchHit) error {
	if asJSON {
		b, err := json.Marshal(h)
		if err != nil {
			return err
		}
		w.Write(b)
		return w.WriteByte('\n')
	}
	if first {
		fmt.Fprintf(w, "%s  %s\n", st.Bold(safeLine(h.ID)), textfmt.Clip(safeLine(h.Title), 70))
	}
	who := safeLine(h.Role)
	if h.Tool != "" {
		who = safeLine(h.Tool) + " " + h.Part
	} else if h.Part == "thinking" || h.Part == "compaction" {
		who += " " + h.Part
	}
	s := h.Snippet
	_, err := fmt.Fprintf(w, "  %6d  %-10s  %s%s%s\n", h.Line, who, s[:h.Match[0]], mark(st, s[h.Match[0]:h.Match[1]]), s[h.Match[1]:])
	return err
}

// mark marks a match: in colour on a terminal, between » and « elsewhere.
func mark(st textfmt.Style, s string) string {
	if st.On {
		return st.Bold(st.Red(s))
	}
	return "»" + s + "«"
}

func newQuery(opts *SearchOptions) (*session.Query, error) {
	q := session.NewLiteralQuery(opts.Query)
	if opts.Regex {
		var err error
		if q, err = session.NewRegexQuery(opts.Query); err != nil {
			return nil, cmdkit.Usagef("--regex: %v", err)
		}
	}
	q.Role, q.Tool = opts.Role, opts.Tool
	if opts.Tool != "" {
		q.Role = "tool"
	}
	return q, nil
}

// snippetContext is how much text a snippet shows each side of a match,
// in runes.
const snippetContext = 40

func toHit(s session.Info, h session.Hit) searchHit {
	before := h.Text[:h.Start]
	for n := 0; n < snippetContext && before != ""; n++ {
		_, size := utf8.DecodeLastRuneInString(before)
		before = before[:len(before)-size]
	}
	after := h.Text[h.End:]
	cut := 0
	for n := 0; n < snippetContext && cut < len(after); n++ {
		_, size := utf8.DecodeRuneInString(after[cut:])
		cut += size
	}
	pre := safeLine(h.Text[len(before):h.Start])
	if before != "" {
		pre = "…" + pre
	}
	match := safeLine(h.Text[h.Start:h.End])
	post := safeLine(after[:cut])
	if cut < len(after) {
		post += "…"
	}
	return searchHit{
		ID: s.Meta.ID, Title: s.Meta.Title, Line: h.Line, Role: h.Role, Tool: h.Tool, Part: h.Part,
		Snippet: pre + match + post, Match: [2]int{len(pre), len(pre) + len(match)}, Path: s.Ref.Path(),
	}
}

// safeLine puts text on one line fit for a terminal: control characters,
// escape sequences and bidi overrides shown escaped (textfmt.Visible), then
// every run of white space one space. Unlike textfmt.VisibleLine it keeps
// a space at either end, which a snippet cut round a match needs.
func safeLine(s string) string {
	s = textfmt.Visible(s)
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			if !space {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		b.WriteRune(r)
		space = false
	}
	return b.String()
}
