package sessions

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mecha-agent/mecha/internal/atomicfile"
	"github.com/mecha-agent/mecha/internal/cmdutil"
	"github.com/mecha-agent/mecha/session"
	viewhtml "github.com/mecha-agent/mecha/sessionview/html"

	"github.com/spf13/cobra"
)

// ViewOptions are the options of "sessions view".
type ViewOptions struct {
	Env    *cmdutil.Env
	ID     string
	Output string
	Open   bool
}

// NewCmdView builds "mecha sessions view".
func NewCmdView(env *cmdutil.Env, runF func(*ViewOptions) error) *cobra.Command {
	opts := &ViewOptions{Env: env}
	cmd := &cobra.Command{
		Use:   "view ID [-o FILE] [--open]",
		Short: "Write a session as one self-contained HTML page",
		Long: `Write a session as one HTML page that needs nothing else: styles and a small
script are inline, and its Content-Security-Policy forbids fetching anything,
so opening it makes no request. The page shows the session's meta, each
attach's configuration with what changed highlighted, the conversation with
each tool call folded to one line (click to see its arguments and result),
denials and refusals marked, compactions, each run's usage and cost, and the
taint band beside the messages with the point where the conversation became
armed. Long texts show their start, with the whole text one click away.

The page goes to $MECHA_HOME/views/<id>.html (mode 0600), or to -o FILE,
replaced whole; its path is printed. --open then opens it with $BROWSER, or
the platform's opener (xdg-open, open).`,
		Args: cmdutil.ExactArgs(1, "one session id"),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.ID = args[0]
			if opts.Output == "-" {
				return cmdutil.Usagef("sessions view writes a file; use sessions export --format html to write the page to stdout")
			}
			if runF != nil {
				return runF(opts)
			}
			return viewRun(opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "", "write the page to `FILE` (default: $MECHA_HOME/views/<id>.html)")
	cmd.Flags().BoolVar(&opts.Open, "open", false, "open the page once written ($BROWSER, xdg-open or open)")
	return cmd
}

func viewRun(opts *ViewOptions) error {
	path, err := opts.Env.ResolveSession(opts.ID)
	if err != nil {
		return err
	}
	cfg, err := opts.Env.Config()
	if err != nil {
		return err
	}
	out := opts.Output
	if out == "" {
		home, err := opts.Env.Home()
		if err != nil {
			return err
		}
		dir := filepath.Join(home, "views")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("sessions view: %v", err)
		}
		out = filepath.Join(dir, session.FileID(path)+".html")
	}
	err = writeFile(out, func(w io.Writer) error { return viewhtml.Write(w, path, cfg.Prices, viewhtml.Options{}) })
	if err != nil {
		return err
	}
	fmt.Fprintln(opts.Env.Out, out)
	if opts.Open {
		return opts.Env.OpenFile(out)
	}
	return nil
}

// writeFile replaces the file at out (mode 0600) with what fill writes,
// streamed; a failure leaves what was there. An error of the file system
// names out, not the temporary file beside it.
func writeFile(out string, fill func(io.Writer) error) error {
	var failed bool
	err := atomicfile.Write(out, 0o600, func(w io.Writer) error {
		err := fill(w)
		failed = err != nil
		return err
	})
	var pe *fs.PathError
	if err != nil && !failed && errors.As(err, &pe) {
		return fmt.Errorf("cannot write %s: %v", out, pe.Err)
	}
	return err
}
