// Package script is "mecha script": a session's tool calls as a POSIX sh
// script that redoes them with no model.
package scriptcmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/internal/atomicfile"
	"github.com/mecha-agent/mecha/internal/buildinfo"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/redrive/toolreplay"
)

// Options are the options of "mecha script".
type Options struct {
	Env *cmdkit.Env
	ID  string
	// Output is -o: a file, "-" for stdout, "" for the default path.
	Output string
	JSON   bool
}

// NewCmdScript builds "mecha script".
func NewCmdScript(env *cmdkit.Env, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Env: env}
	cmd := &cobra.Command{
		Use:   "script ID",
		Short: "Write a session's tool calls as a shell script that redoes them with no model",
		Long: `Write a POSIX sh script that makes the session's tool calls again, in the
order they ran, with their recorded arguments, through "mecha tool call":
no model, no agent loop. Run it as "sh SCRIPT [WORKSPACE]" (default: the
recorded workspace). Calls that ran in the recording run again with --yes;
a call the permission gate denied or the trifecta interlock refused never
ran: it is a comment ("not redone: denied in the recording", "not redone:
refused by the interlock in the recording"), never a command, and no gap.
The script stops at the first call that fails where the recording
succeeded, naming it; a call that failed in the recording may fail again.

The header says which session it comes from and its source: "transcript"
when every call was recovered exactly, "reconstructed" when the record is
damaged (a call whose result never came because the process was killed, a
torn or unparseable line, arguments that do not parse). A reconstructed
script carries a line beginning "# LOSSY:" near the top and a "# GAP:"
comment at the place of each loss.

Each call is a line "call N 'TOOL' ok|failed|unrecorded" (how it ended in
the recording) that runs "mecha tool call --yes -w "$ws" -- TOOL -" with
the recorded input on stdin, from a here-document whose quoted delimiter
no line of the input equals, so the arguments arrive byte for byte. The
environment variable MECHA names the mecha to run. Calls of the agent tool
are left out, with a comment (the child session has its own script).

Each call also passes --taint: what the recording's conversation held when
the model made it (private data, untrusted content, from the session's
taint checkpoints; both when the record cannot say: checkpoints missing, a
session imported from another harness). mecha tool call's trifecta
interlock then judges it as a run would: a call that could send data out
of an armed conversation is refused and the script stops there, even if
the recording ran it with --trifecta off. A comment marks each such call,
and the header counts the armed calls. A call that could send data out
after untrusted content also passes --trust-host for each host the run
trusted then (named in its prompts or its config's [trifecta]
trusted_hosts, or reached before untrusted content came in), so one to a
host only untrusted content named is refused as the run's would be.
Removing a call's --taint is how to redo it regardless.

An MCP tool's call starts the server the recording used, as the session
recorded it, never your configuration's, so the script runs the same on a
machine with another configuration or none. Recordings hold no environment
or header values: a ${VAR} in a recorded command, argument or URL is
expanded from the environment the script runs in, and a server that needs
a secret in its env table or a header is started without it. The calls of
a "mecha mcp proxy" session are redone as mcp__NAME__TOOL (NAME: the
proxy's --name, else upstream).

The script is written to $MECHA_HOME/scripts/replay_<id>.sh (or -o FILE)
with mode 0700, since it holds transcript data, and its path is printed;
-o - writes it to stdout. --json prints
{"path","session","source","calls","lossy","gaps":[{"index","reason"}],
"skipped":[{"index","name","reason"}]}: calls counts the calls redone,
skipped the calls left out as comments.`,
		Args: cmdkit.ExactArgs(1, "one session id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if opts.Output == "-" && opts.JSON {
				return cmdkit.Usagef("-o - writes the script to stdout; it cannot go with --json")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return scriptRun(opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "", "write the script to `FILE` (- for stdout; default $MECHA_HOME/scripts/replay_<id>.sh)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, `print {"path","session","source","calls","lossy","gaps","skipped"}`)
	return cmd
}

// result is the --json output.
type result struct {
	Path    string           `json:"path"`
	Session string           `json:"session"`
	Source  string           `json:"source"`
	Calls   int              `json:"calls"`
	Lossy   bool             `json:"lossy"`
	Gaps    []toolreplay.Gap `json:"gaps"`
	Skipped []skipped        `json:"skipped"`
}

// skipped is a call the script leaves out, as a comment.
type skipped struct {
	Index  int    `json:"index"`
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// skips are the calls the script leaves out, and why.
func skips(calls *toolreplay.Calls) []skipped {
	out := []skipped{}
	for _, c := range calls.Calls {
		if c.Expect == toolreplay.Skip {
			out = append(out, skipped{c.Index, c.Name, c.Note})
		}
	}
	return out
}

func scriptRun(opts *Options) error {
	ref, err := opts.Env.ResolveSession(opts.ID)
	if err != nil {
		return err
	}
	calls, err := toolreplay.Extract(ref.Path())
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	err = toolreplay.WriteScript(&buf, calls, toolreplay.ScriptOptions{
		Version: buildinfo.Version(), Caps: harness.BuiltinCapabilities})
	if err != nil {
		return err
	}
	if opts.Output == "-" {
		// On a terminal the script is for reading: what a session recorded
		// (a here-document's text) must not act on it. A pipe gets it whole.
		_, err := io.WriteString(opts.Env.Out, opts.Env.ForOut(buf.String()))
		return err
	}
	out, err := outputPath(opts, calls.Meta.ID)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o700); err != nil {
		return fmt.Errorf("script: %w", err)
	}
	if err := atomicfile.WriteFile(out, buf.Bytes(), 0o700); err != nil {
		return fmt.Errorf("script: %w", err)
	}
	// A script replaced in place keeps no wider mode than a new one.
	if err := os.Chmod(out, 0o700); err != nil {
		return fmt.Errorf("script: %w", err)
	}
	if calls.Lossy() {
		fmt.Fprintf(opts.Env.Err, "note: %s; the script is reconstructed, with %d %s (see its # LOSSY: line)\n",
			calls.Why(), len(calls.Gaps), textfmt.Plural(len(calls.Gaps), "gap", "gaps"))
	}
	if opts.JSON {
		gaps := calls.Gaps
		if gaps == nil {
			gaps = []toolreplay.Gap{}
		}
		return cmdkit.WriteJSON(opts.Env.Out, result{out, calls.Meta.ID, calls.Source, len(calls.Redone()), calls.Lossy(), gaps, skips(calls)})
	}
	_, err = fmt.Fprintln(opts.Env.Out, out)
	return err
}

func outputPath(opts *Options, id string) (string, error) {
	if opts.Output != "" {
		return filepath.Abs(opts.Output)
	}
	home, err := opts.Env.Home()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, "scripts", "replay_"+id+".sh"), nil
}
