package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/session"
)

// NewCmdSessions builds "mecha sessions" and its subcommands.
func NewCmdSessions(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List, show, locate and price recorded sessions",
		Long: `Read the session store. A session is named by its full id, a unique prefix of
it (such as 20260805T091500), the path of a .jsonl transcript, or "last" for
the newest session.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(NewCmdSessionsList(env), NewCmdSessionsShow(env), NewCmdSessionsPath(env), NewCmdSessionsStats(env))
	return cmd
}

// lastSession is the argument that names the newest session.
const lastSession = "last"

// resolveSession turns an argument into a transcript path: an id, a unique
// prefix, a path to a .jsonl file, or "last" for the newest session.
func resolveSession(env *Env, arg string) (string, error) {
	dir, err := env.SessionDir()
	if err != nil {
		return "", err
	}
	if arg == lastSession {
		l, err := session.List(dir)
		if err != nil {
			return "", err
		}
		if len(l.Sessions) == 0 {
			return "", fmt.Errorf("%w: there are no sessions in %s", session.ErrNotFound, dir)
		}
		return l.Sessions[0].Path, nil
	}
	return session.Resolve(dir, arg)
}

// PathOptions are the options of "sessions path".
type PathOptions struct {
	Env *Env
	ID  string
}

// NewCmdSessionsPath builds "mecha sessions path".
func NewCmdSessionsPath(env *Env) *cobra.Command {
	opts := &PathOptions{Env: env}
	return &cobra.Command{
		Use:   "path ID",
		Short: "Print the path of a session's transcript",
		Args:  exactArgs(1, "one session id"),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.ID = args[0]
			return pathRun(opts)
		},
	}
}

func pathRun(opts *PathOptions) error {
	p, err := resolveSession(opts.Env, opts.ID)
	if err != nil {
		return err
	}
	fmt.Fprintln(opts.Env.Out, p)
	return nil
}

// ListOptions are the options of "sessions list".
type ListOptions struct {
	Env   *Env
	JSON  bool
	Limit int
}

// NewCmdSessionsList builds "mecha sessions list".
func NewCmdSessionsList(env *Env) *cobra.Command {
	opts := &ListOptions{Env: env}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List sessions, newest first",
		Long: `List sessions, newest first: id, creation time, provider/model and title.
Only each transcript's first line is read, so listing costs the same whatever
the size of the transcripts.`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error { return listRun(opts) },
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print a JSON array of {id, created_at, provider, model, title, workspace, path}")
	cmd.Flags().IntVarP(&opts.Limit, "limit", "n", 0, "show only the newest `N` sessions (0: all)")
	return cmd
}

type listJSON struct {
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"created_at"`
	Provider  string    `json:"provider"`
	Model     string    `json:"model"`
	Title     string    `json:"title"`
	Workspace string    `json:"workspace"`
	Path      string    `json:"path"`
}

func listRun(opts *ListOptions) error {
	if opts.Limit < 0 {
		return usagef("--limit must not be negative")
	}
	dir, err := opts.Env.SessionDir()
	if err != nil {
		return err
	}
	// Listing allocates a little per session and keeps all of it: collect
	// less often while it runs (the heap stays small: a few hundred bytes a
	// session).
	defer debug.SetGCPercent(debug.SetGCPercent(800))
	l, err := session.List(dir)
	if err != nil {
		return err
	}
	sessions := l.Sessions
	if opts.Limit > 0 && len(sessions) > opts.Limit {
		sessions = sessions[:opts.Limit]
	}
	if n := len(l.NotSessions); n > 0 {
		fmt.Fprintf(opts.Env.Err, "note: %d .jsonl %s in %s %s and %s skipped\n",
			n, plural(n, "file", "files"), dir, plural(n, "is not a mecha session", "are not mecha sessions"), plural(n, "was", "were"))
	}
	if opts.JSON {
		// An array with one compact object per line: as easy to read and
		// to grep as indented JSON, and cheap for ten thousand sessions.
		w := bufio.NewWriterSize(opts.Env.Out, 64<<10)
		var line bytes.Buffer
		enc := json.NewEncoder(&line)
		enc.SetEscapeHTML(false)
		w.WriteString("[")
		for i, s := range sessions {
			m := s.Meta
			line.Reset()
			if err := enc.Encode(listJSON{m.ID, m.CreatedAt.UTC(), m.Provider, m.Model, m.Title, m.Workspace, s.Path}); err != nil {
				return err
			}
			if i > 0 {
				w.WriteString(",")
			}
			w.WriteString("\n  ")
			w.Write(bytes.TrimSuffix(line.Bytes(), []byte("\n")))
		}
		if len(sessions) > 0 {
			w.WriteString("\n")
		}
		w.WriteString("]\n")
		return w.Flush()
	}
	if len(sessions) == 0 {
		fmt.Fprintf(opts.Env.Err, "no sessions in %s\n", dir)
		return nil
	}
	// Columns padded by hand into one buffer: the id and time columns have
	// a fixed width, only provider/model needs measuring.
	width := len("PROVIDER/MODEL")
	for _, s := range sessions {
		width = max(width, utf8.RuneCountInString(s.Meta.Provider)+1+utf8.RuneCountInString(s.Meta.Model))
	}
	st := newStyle(opts.Env)
	w := bufio.NewWriterSize(opts.Env.Out, 64<<10)
	pad := func(s string, n int) string { return s + strings.Repeat(" ", max(n-utf8.RuneCountInString(s), 0)) }
	fmt.Fprintln(w, st.bold(pad("ID", 26)+pad("CREATED", 18)+pad("PROVIDER/MODEL", width+2)+"TITLE"))
	for _, s := range sessions {
		m := s.Meta
		w.WriteString(pad(m.ID, 24))
		w.WriteString("  ")
		w.WriteString(m.CreatedAt.Local().Format("2006-01-02 15:04"))
		w.WriteString("  ")
		w.WriteString(pad(m.Provider+"/"+m.Model, width+2))
		w.WriteString(clip(oneLine(m.Title), 70))
		w.WriteByte('\n')
	}
	return w.Flush()
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// clip shortens s to at most n runes, marking the cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimSpace(string(r[:n-1])) + "…"
}
