package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/internal/cmdutil"
	"github.com/mecha-agent/mecha/tool"
	"github.com/mecha-agent/mecha/toolreplay"
	"github.com/mecha-agent/mecha/transcript"
)

// CallOptions are the options of "mecha tool call".
type CallOptions struct {
	Env  *cmdutil.Env
	Name string
	// Input is the JSON argument, "-" to read it from standard input, ""
	// for {}.
	Input         string
	Workspace     string
	Yes, ReadOnly bool
	JSON          bool
}

// NewCmdCall builds "mecha tool call".
func NewCmdCall(env *cmdutil.Env, runF func(context.Context, *CallOptions) error) *cobra.Command {
	opts := &CallOptions{Env: env}
	cmd := &cobra.Command{
		Use:   "call NAME [JSON | -]",
		Short: "Run one tool once, with no model, as a run would",
		Long: `Run one tool call, with no model and no agent loop, through the same tool
surface a run builds (workspace confinement, permission gate, truncation,
redaction of secret values, a scrubbed environment for commands). The input
is a JSON object, given as the argument or, with "-", read from standard
input; without it the input is {}.

The result's content goes to stdout; --json prints
{"name","input","content","is_error"} instead.

Permissions as in a run: a call that modifies the workspace or runs a
command asks (and is denied with no terminal); --yes allows it; --read-only
refuses it.

Exit status: 0 when the tool succeeded, 1 when it returned an error result
(a denial included), 2 on bad usage: an unknown tool, input that is not a
JSON object.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return cmdutil.Usagef("%s needs a tool name and at most one JSON input (got %d arguments)", cmd.CommandPath(), len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if len(args) == 2 {
				opts.Input = args[1]
			}
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return callRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Workspace, "workspace", "w", "", "the directory the tool works in (default: the current directory)")
	f.BoolVar(&opts.Yes, "yes", false, "allow a call that modifies the workspace or runs a command without asking")
	f.BoolVar(&opts.ReadOnly, "read-only", false, "refuse a call that modifies the workspace or runs a command")
	f.BoolVar(&opts.JSON, "json", false, `print {"name","input","content","is_error"}`)
	return cmd
}

func (o *CallOptions) validate() error {
	if o.Name == "" {
		return cmdutil.Usagef("the tool name is empty")
	}
	if o.Input != "-" {
		if err := toolreplay.CheckInput([]byte(o.Input)); err != nil {
			return &cmdutil.UsageError{Err: err}
		}
	}
	_, err := cmdutil.PermissionMode(o.Yes, o.ReadOnly)
	return err
}

// callResult is the --json output.
type callResult struct {
	Name    string          `json:"name"`
	Input   json.RawMessage `json:"input"`
	Content string          `json:"content"`
	IsError bool            `json:"is_error"`
}

func callRun(ctx context.Context, opts *CallOptions) error {
	input, err := readInput(opts)
	if err != nil {
		return err
	}
	ws, err := cmdutil.WorkspaceDir(opts.Workspace)
	if err != nil {
		return err
	}
	mode, _ := cmdutil.PermissionMode(opts.Yes, opts.ReadOnly)
	if mode == "" {
		mode = tool.ModeAsk
	}
	var wss cmdutil.Workspaces
	defer wss.Close()
	reg, _, err := cmdutil.BuildTools(opts.Env, &wss, transcript.Config{Workspace: ws, PermissionMode: string(mode)}, cmdutil.ToolSetup{})
	if err != nil {
		return err
	}
	res, err := toolreplay.Invoke(ctx, reg, opts.Name, input)
	switch {
	case errors.Is(err, toolreplay.ErrUnknownTool):
		return &cmdutil.UsageError{Err: err}
	case errors.Is(err, context.Canceled):
		return &cmdutil.InterruptedError{Msg: "interrupted while " + opts.Name + " ran"}
	case err != nil:
		return err
	}
	if opts.JSON {
		err = cmdutil.WriteJSON(opts.Env.Out, callResult{opts.Name, input, res.Content, res.IsError})
	} else {
		err = writeContent(opts.Env.Out, res.Content)
	}
	if err != nil {
		return err
	}
	if res.IsError {
		msg := strings.TrimSpace(res.Content)
		if strings.Contains(msg, "\n") || len(msg) > 200 {
			msg = ""
		}
		return &cmdutil.ToolError{Tool: opts.Name, Msg: msg}
	}
	return nil
}

// readInput returns the call's input: the argument, standard input for
// "-", or {}.
func readInput(opts *CallOptions) (json.RawMessage, error) {
	in := []byte(opts.Input)
	if opts.Input == "-" {
		b, err := io.ReadAll(opts.Env.In)
		if err != nil {
			return nil, fmt.Errorf("reading the input from stdin: %w", err)
		}
		if err := toolreplay.CheckInput(b); err != nil {
			return nil, &cmdutil.UsageError{Err: err}
		}
		in = b
	}
	if len(strings.TrimSpace(string(in))) == 0 {
		return json.RawMessage(`{}`), nil
	}
	return json.RawMessage(strings.TrimSpace(string(in))), nil
}

// writeContent prints a result, ending it with a newline when it has none.
func writeContent(w io.Writer, content string) error {
	if content != "" && !strings.HasSuffix(content, "\n") {
		content += "\n"
	}
	_, err := io.WriteString(w, content)
	return err
}
