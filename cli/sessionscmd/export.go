package sessionscmd

import (
	"io"
	"math"
	"path/filepath"
	"strings"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/sessionview"
	viewhtml "github.com/mecha-agent/mecha/record/sessionview/html"

	"github.com/spf13/cobra"
)

// ExportOptions are the options of "sessions export".
type ExportOptions struct {
	Env    *cmdkit.Env
	ID     string
	IDs    []string // every id given (the inspect format takes several)
	Format string
	Output string
	Budget int
}

// NewCmdExport builds "mecha sessions export".
func NewCmdExport(env *cmdkit.Env, runF func(*ExportOptions) error) *cobra.Command {
	opts := &ExportOptions{Env: env}
	var budget string
	cmd := &cobra.Command{
		Use:   "export ID... [--format md|html|json|inspect] [-o FILE]",
		Short: "Write a session as Markdown, HTML or one JSON document",
		Long: `Write a session to share it:

  md    Markdown to paste into a pull request or an issue: the task, each
        tool call with its arguments and the first 20 lines (2,000 bytes)
        of its result (folded in a <details> block), the assistant's text,
        denials, refusals and the point the conversation became armed,
        compactions, each run, then the answer and the usage. Text from the
        transcript sits in fences longer than any backtick run in it, and
        other text from it is escaped, so it cannot open a heading, a link,
        a tag or a mention, or break the document's structure.
  html  the page of "mecha sessions view". With -o FILE, the texts and
        parts past --budget go to FILE.files/ as with view; to stdout there
        is one page, whose long texts past the budget show at most 512
        bytes, the page saying the rest is left out.
  json  the whole session as one JSON object, the same document as
        "mecha sessions show --json": id, path, meta, every record after the
        header in file order, then taint, usage, turns, cost_usd and the
        lines skipped.` + inspectHelp + `

The format defaults to the extension of -o (.md, .html, .json), else md. The
output goes to stdout, or replaces FILE whole (mode 0600). On a terminal,
control characters and escape sequences from the transcript are shown as
escapes (\x1b, \u202e), never sent to it; to a pipe or a file, every byte
is kept. Each format is
written as the transcript is read, never holding it whole.`,
		Args: cmdkit.RangeArgs(1, math.MaxInt, "a session id (several with --format inspect)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID, opts.IDs = args[0], args
			if err := opts.resolveFormat(); err != nil {
				return err
			}
			if len(args) > 1 && opts.Format != "inspect" {
				return cmdkit.Usagef("export takes one session id, except with --format inspect")
			}
			var err error
			if opts.Budget, err = parseSize("--budget", budget); err != nil {
				return err
			}
			if cmd.Flags().Changed("budget") && opts.Format != "html" {
				return cmdkit.Usagef("--budget is for --format html")
			}
			if runF != nil {
				return runF(opts)
			}
			return exportRun(opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Format, "format", "f", "", "md, html, json or inspect (default: from -o's extension, else md)")
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "", "write to `FILE` instead of stdout")
	cmd.Flags().StringVar(&budget, "budget", "8M", "html: keep each page to about `SIZE` bytes (512K, 8M)")
	return cmd
}

// resolveFormat checks --format, or picks it from -o's extension.
func (o *ExportOptions) resolveFormat() error {
	if o.Format == "" {
		switch strings.ToLower(filepath.Ext(o.Output)) {
		case ".html", ".htm":
			o.Format = "html"
		case ".json":
			o.Format = "json"
		default:
			o.Format = "md"
		}
	}
	switch o.Format {
	case "md", "html", "json", "inspect":
		return nil
	case "markdown":
		o.Format = "md"
		return nil
	}
	return cmdkit.Usagef("--format must be md, html, json or inspect, not %q", o.Format)
}

func exportRun(opts *ExportOptions) error {
	if opts.Format == "inspect" {
		return exportInspect(opts)
	}
	ref, err := opts.Env.ResolveSession(opts.ID)
	if err != nil {
		return err
	}
	cfg, err := opts.Env.Config()
	if err != nil {
		return err
	}
	path := ref.Path() // the renderers read the file as they write
	page := func(w io.Writer, o viewhtml.Options) error {
		o.Budget = opts.Budget
		return viewhtml.Write(w, path, cfg.Prices(), o)
	}
	write := func(w io.Writer) error {
		switch opts.Format {
		case "html":
			return page(w, viewhtml.Options{})
		case "json":
			return sessionview.WriteJSON(w, path, cfg.Prices())
		}
		return sessionview.WriteMarkdown(w, path, cfg.Prices(), sessionview.MarkdownOptions{})
	}
	if opts.Output == "" || opts.Output == "-" {
		return toOut(opts.Env, write)
	}
	if opts.Format == "html" {
		return writePage(opts.Output, page)
	}
	return writeFile(opts.Output, write)
}

// toOut writes to stdout: byte for byte to a pipe or a file; on a
// terminal through textfmt.VisibleWriter, so that nothing the session
// recorded (a file name, a tool name, an error) acts on the terminal.
func toOut(env *cmdkit.Env, write func(io.Writer) error) error {
	if !env.OutTTY {
		return write(env.Out)
	}
	w := textfmt.VisibleWriter(env.Out)
	err := write(w)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return err
}
