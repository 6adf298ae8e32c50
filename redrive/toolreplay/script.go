package toolreplay

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/transcript"
)

// ScriptOptions shape a generated script.
type ScriptOptions struct {
	// Version is mecha's version, named in the header.
	Version string
	// Caps returns what a tool may do, to say in the header whether the
	// script modifies the workspace or runs commands; ok is false for a
	// tool mecha does not have. Nil: nothing is known.
	Caps func(name string) (c tool.Capabilities, ok bool)
}

// WriteScript writes a POSIX sh script that redoes the calls through
// "mecha tool call", in order, with their exact arguments; see the
// package documentation for its shape.
func WriteScript(w io.Writer, c *Calls, o ScriptOptions) error {
	bw := bufio.NewWriter(w)
	writeHeader(bw, c, o)
	bw.WriteString(scriptPrelude)
	gaps := c.Gaps
	flushGaps := func(upTo int) {
		for len(gaps) > 0 && gaps[0].Index <= upTo {
			fmt.Fprintf(bw, "\n# GAP: %s\n", Comment(gaps[0].Reason))
			gaps = gaps[1:]
		}
	}
	var reached []string // hosts the run reached before untrusted content
	for _, call := range c.Calls {
		flushGaps(call.Index)
		fmt.Fprintf(bw, "\n# call %d: %s", call.Index, Comment(call.Name))
		if call.Expect == Skip {
			bw.WriteString(": not redone")
		}
		if call.Note != "" {
			fmt.Fprintf(bw, ": %s", Comment(call.Note))
		}
		bw.WriteString("\n")
		if call.Expect == Skip {
			if call.NotRun() {
				fmt.Fprintf(bw, "# recorded: %s\n", Comment(textfmt.Clip(call.Result, 400)))
			}
			fmt.Fprintf(bw, "# input: %s\n", Comment(textfmt.JSON(call.Input, 400)))
			continue
		}
		if armed(call) {
			if leak := mayLeak(call, o.Caps); leak != "" {
				held := "the conversation held private data and untrusted content"
				if call.TaintUnknown {
					held = "the record cannot say what the conversation held (never clean)"
				}
				fmt.Fprintf(bw, "# armed: %s, and %s could\n", held, Comment(call.Name))
				fmt.Fprintf(bw, "# send it out (%s): with --taint, mecha tool call's interlock refuses it if it can\n", Comment(leak))
			}
		}
		if call.Taint.Untrusted && (!armed(call) || mayLeak(call, o.Caps) == "") {
			if act := mayAct(call, o.Caps); act != "" {
				fmt.Fprintf(bw, "# untrusted: the conversation held untrusted content, and %s acts\n", Comment(call.Name))
				fmt.Fprintf(bw, "# outward (%s): with --taint, mecha tool call's interlock refuses it if it can\n", Comment(act))
			}
		}
		body := strings.TrimSpace(string(call.Input))
		if body == "" {
			body = "{}"
		}
		delim := Delimiter(body)
		fmt.Fprintf(bw, "call %d %s %s%s%s%s <<'%s'\n%s\n%s\n", call.Index, Quote(call.Name), expectWord(call.Expect), taintFlag(call),
			trustFlags(call, o.Caps, reached), serverFlags(call.Server), delim, body, delim)
		if !call.Taint.Untrusted && mayLeak(call, o.Caps) != "" {
			reached = append(reached, tool.HostsIn(call.Input)...)
		}
	}
	flushGaps(len(c.Calls) + 1)
	bw.WriteString("\nprintf 'replay: done, %s calls redone\\n' \"$calls\" >&2\n")
	return bw.Flush()
}

// taintFlag is the --taint of "mecha tool call" that starts the call in
// the conversation the recording had when the call was made ("" when it
// was clean): the interlock judges it as the run's would have.
func taintFlag(call Call) string {
	if call.Taint.Clean() {
		return ""
	}
	return " --taint=" + tool.TaintNames(call.Taint)
}

// trustFlags are the --trust-host flags of "mecha tool call" that give the
// interlock the hosts the run trusted at the call (its prompts', its
// config's, those reached before untrusted content: reached), for a call
// its rule on destinations judges (one that may send data out, made after
// untrusted content); "" for any other.
func trustFlags(call Call, caps func(string) (tool.Capabilities, bool), reached []string) string {
	if !call.Taint.Untrusted || mayLeak(call, caps) == "" {
		return ""
	}
	hs := append(slices.Clone(call.TrustedHosts), reached...)
	slices.Sort(hs)
	var b strings.Builder
	for _, h := range slices.Compact(hs) {
		b.WriteString(" --trust-host=" + Quote(h))
	}
	return b.String()
}

func armed(call Call) bool { return call.Taint.Private && call.Taint.Untrusted }

// mayLeak says why the call's tool may send data out, by the capabilities
// the interlock judges ("" when it cannot): an MCP tool started ad hoc
// declares every capability, a tool mecha does not have may do anything.
func mayLeak(call Call, caps func(string) (tool.Capabilities, bool)) string {
	c, known := judged(call, caps, tool.Capabilities{ReachesNetwork: true})
	if !known {
		return unknownTool
	}
	return tool.CanLeak(c)
}

// mayAct says why the call's tool may act outward in the user's name,
// as mayLeak does for sending.
func mayAct(call Call, caps func(string) (tool.Capabilities, bool)) string {
	c, known := judged(call, caps, tool.Capabilities{ActsOutward: true})
	if !known {
		return unknownTool
	}
	return tool.CanAct(c)
}

const unknownTool = "a tool mecha does not have here may do anything"

// judged is what the call's tool declares: adHoc for a tool of a recorded
// MCP server (started ad hoc, it declares every capability), caps' answer
// for one mecha has; not known for any other.
func judged(call Call, caps func(string) (tool.Capabilities, bool), adHoc tool.Capabilities) (tool.Capabilities, bool) {
	if call.Server != nil {
		return adHoc, true
	}
	if caps == nil {
		return tool.Capabilities{}, false
	}
	return caps(call.Name)
}

// serverFlags are the flags of "mecha tool call" that start a recorded
// MCP server, each word quoted on its own ("" for a built-in tool): the
// script starts the server the recording used, not one of the user's
// configuration.
func serverFlags(s *transcript.MCPServer) string {
	if s == nil {
		return ""
	}
	var b strings.Builder
	flag := func(name, value string) { b.WriteString(" --" + name + "=" + Quote(value)) }
	flag("mcp-name", s.Name)
	if s.URL != "" {
		flag("mcp-url", s.URL)
		if s.Transport != "" && s.Transport != "http" {
			flag("mcp-transport", s.Transport)
		}
		return b.String()
	}
	flag("mcp-command", s.Command)
	for _, a := range s.Args {
		flag("mcp-arg", a)
	}
	return b.String()
}

// ServerText is how a header or a message describes a recorded server:
// its transport, command and args or URL, and who answered.
func ServerText(s transcript.MCPServer) string {
	how := s.Transport + " " + s.URL
	if s.URL == "" {
		how = strings.Join(append([]string{s.Command}, s.Args...), " ")
	}
	if s.ServerName != "" {
		how += " (" + s.ServerName + " " + s.ServerVersion + ")"
	}
	return how
}

func expectWord(e Expect) string {
	switch e {
	case Succeed:
		return "ok"
	case Fail:
		return "failed"
	}
	return "unrecorded"
}

func writeHeader(w *bufio.Writer, c *Calls, o ScriptOptions) {
	redone := c.Redone()
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	p("#!/bin/sh\n")
	p("# Generated by mecha %s (mecha script): the tool calls of a session, redone\n", Comment(o.Version))
	p("# in order with their recorded arguments through \"mecha tool call\", with no\n")
	p("# model and no agent loop.\n")
	if c.Lossy() {
		p("# LOSSY: %s\n", Comment(lossLine(c)))
	}
	p("#\n")
	p("# session:   %s\n", Comment(c.Meta.ID))
	p("# title:     %s\n", Comment(c.Meta.Title))
	p("# created:   %s\n", c.Meta.CreatedAt.UTC().Format(time.RFC3339))
	p("# workspace: %s\n", Comment(c.Meta.Workspace))
	p("# calls:     %d redone of %d recorded", len(redone), len(c.Calls))
	if n := len(c.Calls) - len(redone); n > 0 {
		p(" (%d never ran or cannot be recovered: not redone)", n)
	}
	p("\n# source:    %s\n", c.Source)
	p("# effects:   %s\n", Comment(effects(redone, o.Caps)))
	if servers := c.Servers(); len(servers) > 0 {
		p("#\n")
		p("# MCP servers: each call of an MCP tool starts the server the recording\n")
		p("# used, as recorded (never your configuration's), and stops it after:\n")
		for _, s := range servers {
			p("#   %s: %s\n", Comment(s.Name), Comment(ServerText(s)))
		}
		p("# The recording keeps no environment or header values; ${VAR} in a\n")
		p("# command, argument or URL is expanded from the environment of the run.\n")
	}
	if n, unknown := armedCalls(redone); n > 0 {
		p("# armed:     %d %s made in a conversation holding private data and\n", n, textfmt.Plural(n, "call", "calls"))
		if unknown > 0 {
			p("#            untrusted content (for %d the record cannot say what it held):\n", unknown)
		} else {
			p("#            untrusted content:\n")
		}
		p("#            --taint=private,untrusted has the interlock refuse those that\n")
		p("#            can send data out\n")
	}
	p("#\n")
	p("# Usage: sh THIS_SCRIPT [WORKSPACE]   (default: the recorded workspace)\n")
	p("# Every call runs with --yes: whoever runs this script has chosen to redo\n")
	p("# them. A call the recording did not run (denied, or refused by the\n")
	p("# interlock) is a comment. Each call passes --taint: what the recording's\n")
	p("# conversation held when the model made it (private data, untrusted\n")
	p("# content; both where the record cannot say), so mecha tool call's trifecta\n")
	p("# interlock judges it as a run would: one that could send data out of an\n")
	p("# armed conversation, or act outward after untrusted content, is refused,\n")
	p("# and the script stops there. A call that could send data out after\n")
	p("# untrusted content also passes --trust-host: the hosts the run trusted\n")
	p("# then (named in its prompts or config, or reached before that content),\n")
	p("# so that one to a host only untrusted content named is refused too. The script\n")
	p("# stops at the first call that fails where the recording succeeded; a call\n")
	p("# that failed in the recording may fail again. MECHA names the mecha to run\n")
	p("# (default: mecha on the PATH).\n")
	p("\nrecorded=%s\n", Quote(c.Meta.Workspace))
}

// armedCalls counts the calls made in an armed conversation, and of them
// those whose taint is unknown.
func armedCalls(calls []Call) (n, unknown int) {
	for _, c := range calls {
		if armed(c) {
			n++
			if c.TaintUnknown {
				unknown++
			}
		}
	}
	return n, unknown
}

// lossLine says in one line what was lost.
func lossLine(c *Calls) string {
	reasons := make([]string, len(c.Gaps))
	for i, g := range c.Gaps {
		reasons[i] = g.Reason
	}
	what := "the damaged record still holds"
	if f := c.Meta.ImportedFrom; f != nil {
		what = "a session imported from " + f.Harness + " holds"
	} else if c.RecordingStopped {
		what = "the server recorded before its recording stopped"
	}
	return fmt.Sprintf("built from what %s, not an exact copy of the run (%d %s; see the GAP comments): %s",
		what, len(c.Gaps), textfmt.Plural(len(c.Gaps), "gap", "gaps"), strings.Join(reasons, "; "))
}

// effects says whether the redone calls modify the workspace or run
// commands.
func effects(calls []Call, caps func(string) (tool.Capabilities, bool)) string {
	var modifies, runs, network, acts, unknown []string
	seen := map[string]bool{}
	for _, c := range calls {
		if seen[c.Name] {
			continue
		}
		seen[c.Name] = true
		var cp tool.Capabilities
		ok := false
		switch {
		case c.Server != nil:
			// An MCP tool started ad hoc declares every capability.
			cp, ok = tool.Capabilities{ModifiesWorkspace: true, RunsCommands: true, ReachesNetwork: true, ActsOutward: true}, true
		case caps != nil:
			cp, ok = caps(c.Name)
		}
		switch {
		case !ok:
			unknown = append(unknown, c.Name)
		default:
			if cp.ModifiesWorkspace {
				modifies = append(modifies, c.Name)
			}
			if cp.RunsCommands {
				runs = append(runs, c.Name)
			}
			if cp.ReachesNetwork {
				network = append(network, c.Name)
			}
			if cp.ActsOutward {
				acts = append(acts, c.Name)
			}
		}
	}
	var parts []string
	say := func(names []string, what string) {
		if len(names) > 0 {
			parts = append(parts, what+" ("+strings.Join(names, ", ")+")")
		}
	}
	say(modifies, "modifies the workspace")
	say(runs, "runs commands")
	say(network, "may reach the network")
	say(acts, "may act outward in the user's name")
	say(unknown, "calls tools mecha does not have here, whose effects are unknown")
	if len(parts) == 0 {
		return "reads only: it neither modifies the workspace nor runs commands"
	}
	return strings.Join(parts, "; ")
}

const scriptPrelude = `ws=${1:-$recorded}
MECHA=${MECHA:-mecha}
if [ ! -d "$ws" ]; then
	printf 'replay: the workspace %s is not a directory\n' "$ws" >&2
	exit 2
fi
calls=0

# call INDEX NAME EXPECT [FLAGS...]: redo one call, its JSON input on
# standard input. EXPECT is how it ended in the recording: ok (a failure
# now stops the script), failed (it may fail again) or unrecorded (its
# result was never recorded: anything goes). FLAGS are the taint the call
# starts from (--taint) and the MCP server of an MCP tool.
call() {
	index=$1 name=$2 expect=$3
	shift 3
	printf '== call %s: %s\n' "$index" "$name" >&2
	"$MECHA" tool call --yes -w "$ws" "$@" -- "$name" -
	status=$?
	calls=$((calls + 1))
	if [ "$status" -ne 0 ] && [ "$expect" = ok ]; then
		printf 'replay: stopped at call %s (%s): it failed (exit %s) where the recording succeeded\n' "$index" "$name" "$status" >&2
		exit 1
	fi
	return 0
}
`

// Quote quotes s for a POSIX shell: single quotes, in which every byte
// stands for itself, with each single quote written as '\”.
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Delimiter returns a here-document delimiter that no line of body equals,
// so the body, written after a quoted delimiter (no expansion at all),
// reaches the command byte for byte.
func Delimiter(body string) string {
	lines := map[string]bool{}
	for _, l := range strings.Split(body, "\n") {
		lines[l] = true
	}
	d := "MECHA_INPUT"
	for n := 1; lines[d]; n++ {
		d = fmt.Sprintf("MECHA_INPUT_%d", n)
	}
	return d
}

// Comment makes s safe on one comment line: white space folded, other
// control characters written as \xNN, so that nothing in a recorded value
// can end the comment and become a command.
func Comment(s string) string {
	s = textfmt.OneLine(s)
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == unicode.ReplacementChar:
			b.WriteRune(r)
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029':
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
