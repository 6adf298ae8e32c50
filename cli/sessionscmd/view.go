package sessionscmd

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/internal/atomicfile"
	viewhtml "github.com/mecha-agent/mecha/record/sessionview/html"

	"github.com/spf13/cobra"
)

// ViewOptions are the options of "sessions view".
type ViewOptions struct {
	Env    *cmdkit.Env
	ID     string
	Output string
	Open   bool
	Budget int
}

// NewCmdView builds "mecha sessions view".
func NewCmdView(env *cmdkit.Env, runF func(*ViewOptions) error) *cobra.Command {
	opts := &ViewOptions{Env: env}
	var budget string
	cmd := &cobra.Command{
		Use:   "view ID [-o FILE] [--open] [--budget SIZE]",
		Short: "Write a session as one self-contained HTML page",
		Long: `Write a session as one HTML page that needs nothing else: styles and a small
script are inline, and its Content-Security-Policy forbids fetching anything,
so opening it makes no request. The page shows the session's meta, each
attach's configuration with what changed highlighted, the conversation with
each tool call folded to one line (click to see its arguments and result),
denials and refusals marked, compactions, each run's usage and cost, and the
taint band beside the messages with the point where the conversation became
armed. Long texts show their start, with the whole text one click away.

A page is kept to about --budget bytes (8M by default, which a browser
opens in seconds). A cut text whose whole text would take the page past it
has that text in a directory beside the page, FILE.files/NNNN.txt (plain
text, mode 0600), linked from the cut; and once the page is full, the
session goes on in parts, FILE.files/part-0002.html and on, each page
linking the next (the totals end the last). A session under the budget is
one file and no directory.

The page goes to $MECHA_HOME/views/<id>.html (mode 0600, in a directory
only you can enter), or to -o FILE, replaced whole with its directory
(FILE.files/, mode 0700, written under a temporary name and renamed into
place with the page; a page that needs none removes it). A FILE.files held
by a file, or by a directory with anything but such files, is an error and
nothing is written. To share a session of several parts, share the
directory with the page. Its path is printed. --open then opens it with
$BROWSER (a command; %s in it stands for the file, else the file is added
at the end), else the platform's opener (xdg-open, open).`,
		Args: cmdkit.ExactArgs(1, "one session id"),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.ID = args[0]
			if opts.Output == "-" {
				return cmdkit.Usagef("sessions view writes a file; use sessions export --format html to write the page to stdout")
			}
			var err error
			if opts.Budget, err = parseSize("--budget", budget); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return viewRun(opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "", "write the page to `FILE` (default: $MECHA_HOME/views/<id>.html)")
	cmd.Flags().BoolVar(&opts.Open, "open", false, "open the page once written ($BROWSER, xdg-open or open)")
	cmd.Flags().StringVar(&budget, "budget", "8M", "keep each page to about `SIZE` bytes (512K, 8M); past it, texts and parts go to FILE.files/")
	return cmd
}

func viewRun(opts *ViewOptions) error {
	ref, err := opts.Env.ResolveSession(opts.ID)
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
		out = filepath.Join(dir, ref.ID+".html")
	}
	err = writePage(out, func(w io.Writer, o viewhtml.Options) error {
		o.Budget = opts.Budget
		return viewhtml.Write(w, ref.Path(), cfg.Prices(), o)
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(opts.Env.Out, out)
	if opts.Open {
		return opts.Env.OpenFile(out)
	}
	return nil
}

// writePage replaces the page at out and its sidecar directory with what
// fill writes, given the sidecar in its options; a failure leaves both as
// they were.
func writePage(out string, fill func(io.Writer, viewhtml.Options) error) error {
	side, err := viewhtml.NewSidecar(out)
	if err != nil {
		return err
	}
	defer side.Cleanup()
	return writeFile(out, func(w io.Writer) error {
		if err := fill(w, viewhtml.Options{Files: side}); err != nil {
			return err
		}
		return side.Commit()
	})
}

// parseSize reads a size in bytes with an optional K or M suffix (KiB,
// MiB); it must be positive.
func parseSize(flag, s string) (int, error) {
	t := strings.TrimSuffix(strings.TrimSuffix(strings.ToUpper(s), "IB"), "B")
	mult := 1
	switch {
	case strings.HasSuffix(t, "K"):
		mult, t = 1<<10, t[:len(t)-1]
	case strings.HasSuffix(t, "M"):
		mult, t = 1<<20, t[:len(t)-1]
	}
	n, err := strconv.Atoi(t)
	if err != nil || n <= 0 || n > (1<<40)/mult {
		return 0, cmdkit.Usagef("%s must be a positive size such as 512K or 8M, not %q", flag, s)
	}
	return n * mult, nil
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
