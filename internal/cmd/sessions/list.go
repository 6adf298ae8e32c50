package sessions

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mecha-agent/mecha/internal/cmdutil"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/session"
	"github.com/spf13/cobra"
)

// ListOptions are the options of "sessions list".
type ListOptions struct {
	Env   *cmdutil.Env
	JSON  bool
	Limit int
}

// NewCmdList builds "mecha sessions list".
func NewCmdList(env *cmdutil.Env, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{Env: env}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List sessions, newest first",
		Long: `List sessions, newest first: id, creation time, provider/model and title.
Only each transcript's first line is read, so listing costs the same whatever
the size of the transcripts.`,
		Args: cmdutil.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if opts.Limit < 0 {
				return cmdutil.Usagef("--limit must not be negative")
			}
			if runF != nil {
				return runF(opts)
			}
			return listRun(opts)
		},
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
	dir, err := opts.Env.SessionDir()
	if err != nil {
		return err
	}
	// Listing allocates a little per session and keeps all of it: collect
	// less often while it runs (the heap stays small: a few hundred bytes a
	// session).
	defer opts.Env.TuneGC(800)()
	l, err := session.List(dir)
	if err != nil {
		return err
	}
	sessions := l.Sessions
	if opts.Limit > 0 && len(sessions) > opts.Limit {
		sessions = sessions[:opts.Limit]
	}
	opts.Env.NoteSkipped(l.NotSessions)
	for _, s := range l.Sessions {
		opts.Env.NoteForeignID(s.Path, s.HeaderID)
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
	st := cmdutil.NewStyle(opts.Env)
	w := bufio.NewWriterSize(opts.Env.Out, 64<<10)
	pad := func(s string, n int) string { return s + strings.Repeat(" ", max(n-utf8.RuneCountInString(s), 0)) }
	fmt.Fprintln(w, st.Bold(pad("ID", 26)+pad("CREATED", 18)+pad("PROVIDER/MODEL", width+2)+"TITLE"))
	for _, s := range sessions {
		m := s.Meta
		w.WriteString(pad(m.ID, 24))
		w.WriteString("  ")
		w.WriteString(m.CreatedAt.In(opts.Env.Zone()).Format("2006-01-02 15:04"))
		w.WriteString("  ")
		w.WriteString(pad(m.Provider+"/"+m.Model, width+2))
		w.WriteString(textfmt.Clip(textfmt.OneLine(m.Title), 70))
		w.WriteByte('\n')
	}
	return w.Flush()
}
