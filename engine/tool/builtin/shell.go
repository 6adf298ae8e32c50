package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mecha-agent/mecha/engine/sandbox"
	"github.com/mecha-agent/mecha/engine/sandbox/egress"
	"github.com/mecha-agent/mecha/engine/tool"
)

const shellDescription = `Run a shell command in the workspace directory with /bin/sh -c.

Standard input is empty; standard output and standard error are combined into the result. A command that exits non-zero or times out is reported as an error, with a last line such as "[exit status 2]". The command is killed, with every process it started, when it exceeds timeout_seconds (default %d, at most %d). Processes left running in the background are killed when the command finishes. Long output is cut in the middle, keeping its beginning and its end. %s`

// What the description says of confinement, by sandbox setting.
const (
	shellUnconfined = "The command is not confined to the workspace: it can read and change anything the user can, and reach the network."
	shellConfined   = "The command runs in a sandbox: it can read the whole file system but write only inside the workspace and $TMPDIR (a private directory, emptied after each call)"
	shellNoNetwork  = shellConfined + ", and it cannot reach any network: no TCP, UDP, DNS or socket of any kind."
	shellNetwork    = shellConfined + "; it can reach the network."
	shellEgress     = shellConfined + "; the network is cut but for these hosts, reached only through the HTTP proxy set in HTTP_PROXY and HTTPS_PROXY (curl, pip, npm and git use it): %s. Any other host gets 403 Forbidden from the proxy, and direct sockets are refused."
)

var shellSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "command": {"type": "string", "description": "The command line, run by /bin/sh -c."},
    "timeout_seconds": {"type": "integer", "minimum": 1, "description": "Kill the command after this many seconds."}
  },
  "required": ["command"],
  "additionalProperties": false
}`)

type shellParams struct {
	Command        string `json:"command"`
	TimeoutSeconds *int   `json:"timeout_seconds"`
}

type shell struct {
	ws   Workspace
	opts Options
}

// NewShell returns the shell tool. It runs commands with the workspace root
// as working directory but does not confine them.
func NewShell(ws Workspace, opts Options) tool.Tool {
	return &shell{ws: ws, opts: opts.withDefaults()}
}

func (t *shell) Spec() tool.Spec {
	return tool.Spec{
		Name: NameShell,
		Description: fmt.Sprintf(shellDescription,
			int(t.opts.ShellTimeout/time.Second), int(t.opts.MaxShellTimeout/time.Second), t.confinement()),
		InputSchema: shellSchema,
	}
}

func (t *shell) confinement() string {
	switch {
	case t.opts.Sandbox.Egress:
		return fmt.Sprintf(shellEgress, strings.Join(t.opts.AllowDomains, ", "))
	case t.opts.Sandbox.NetworkCut():
		return shellNoNetwork
	case t.opts.Sandbox.Confined():
		return shellNetwork
	}
	return shellUnconfined
}

// Capabilities are computed from the sandbox actually enforced: with the
// network cut, a command can neither reach the network nor bring in
// anything from outside the machine. With an egress allowlist it brings
// content in from those hosts (External), but counts as able to send data
// out only when one of them is marked as able to receive it (EgressSends):
// a shell that can download from a package registry is not an
// exfiltration route the way an open network is (see SECURITY.md). A
// command that reaches a host able to receive can also act there in the
// user's name (git push, an API's POST): the shell acts outward exactly
// when it can send.
func (t *shell) Capabilities() tool.Capabilities {
	net := !t.opts.Sandbox.NetworkCut()
	if t.opts.Sandbox.Egress {
		return tool.Capabilities{ReadsWorkspace: true, ModifiesWorkspace: true, RunsCommands: true,
			ReachesNetwork: t.opts.EgressSends, ActsOutward: t.opts.EgressSends, External: true}
	}
	return tool.Capabilities{
		ReadsWorkspace:    true,
		ModifiesWorkspace: true,
		RunsCommands:      true,
		ReachesNetwork:    net,
		ActsOutward:       net,
		External:          net,
		// What a command prints of the workspace is the workspace's text.
		UntrustedWorkspace: t.opts.UntrustedWorkspace,
	}
}

// outcome is how a command ended.
type outcome struct {
	exitCode  int    // when it exited
	signal    string // when a signal it was not sent by us killed it
	timedOut  bool
	cancelled bool
	startErr  error
	waitErr   error // waiting for it failed (not an exit status)
}

// Run runs the command. When ctx is cancelled the command is killed and Run
// returns both the partial result and an error wrapping ctx's error.
func (t *shell) Run(ctx context.Context, input json.RawMessage) (tool.Result, error) {
	if err := ctx.Err(); err != nil {
		return tool.Result{}, fmt.Errorf("builtin: %s: %w", NameShell, err)
	}
	var p shellParams
	if err := decodeInput(input, &p, "command", "timeout_seconds"); err != nil {
		return errorResult("%v", err), nil
	}
	if strings.TrimSpace(p.Command) == "" {
		return errorResult("%v", missing("command")), nil
	}
	if t.ws.Root() == "" {
		return tool.Result{}, errors.New("builtin: shell: workspace not initialised (use NewWorkspace)")
	}
	timeout := t.opts.ShellTimeout
	var notes []string
	if s := p.TimeoutSeconds; s != nil {
		maxSeconds := int(t.opts.MaxShellTimeout / time.Second)
		switch {
		case *s < 1:
			return errorResult("invalid input: timeout_seconds must be at least 1, got %d", *s), nil
		case *s > maxSeconds:
			timeout = t.opts.MaxShellTimeout
			notes = append(notes, fmt.Sprintf("[timeout_seconds %d was capped at the maximum, %d]", *s, maxSeconds))
		default:
			timeout = time.Duration(*s) * time.Second
		}
	}

	spec := commandSpec{
		shell:   t.opts.Shell,
		path:    t.opts.Shell,
		argv:    []string{t.opts.Shell, "-c", p.Command},
		dir:     t.ws.Root(),
		env:     t.opts.Env,
		timeout: timeout,
		grace:   t.opts.KillGrace,
		guard:   !t.opts.noOrphanGuard,
	}
	var egress *egressLog
	if t.opts.Sandbox.Confined() {
		cleanup, el, err := t.confine(&spec)
		if err != nil {
			return errorResult("the command could not be started: %v", err), nil
		}
		defer cleanup()
		egress = el
	}
	// The output is redacted as it streams, before the head and the tail
	// are kept: a secret printed across the cut is replaced whole.
	out := newHeadTail(t.opts.MaxResultBytes)
	redacting := t.opts.redactor.Writer(out)
	oc := runCommand(ctx, spec, redacting)
	_ = redacting.Close()
	if oc.startErr != nil {
		return errorResult("the command could not be started: %v", oc.startErr), nil
	}

	var b strings.Builder
	b.WriteString(out.String())
	status, failed := oc.status(timeout)
	if out.Len() == 0 && status == "" {
		status = "[no output]"
	}
	if status != "" {
		notes = append([]string{status}, notes...)
	}
	// Each connection the egress proxy saw, as a note the session keeps.
	notes = append(notes, egress.notes()...)
	for _, n := range notes {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.WriteString(n)
	}
	res := tool.Result{Content: b.String(), IsError: failed}
	if oc.cancelled {
		return res, fmt.Errorf("builtin: shell: %w", context.Cause(ctx))
	}
	return res, nil
}

// status returns the status line of an outcome (empty for a plain success)
// and whether the model should read it as a failure.
func (oc outcome) status(timeout time.Duration) (string, bool) {
	switch {
	case oc.timedOut:
		return fmt.Sprintf("[timed out after %s; the command and every process it started were killed]", formatDuration(timeout)), true
	case oc.cancelled:
		return "[cancelled; the command and every process it started were killed]", true
	case oc.signal != "":
		return fmt.Sprintf("[killed by signal: %s]", oc.signal), true
	case oc.waitErr != nil:
		return fmt.Sprintf("[the command failed: %v]", oc.waitErr), true
	case oc.exitCode != 0:
		return fmt.Sprintf("[exit status %d]", oc.exitCode), true
	}
	return "", false
}

// formatDuration writes whole seconds as "3s" and anything else as
// time.Duration does.
func formatDuration(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", int64(d/time.Second))
	}
	return d.String()
}

// egressLog gathers the egress proxy's lines during a call.
type egressLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *egressLog) add(s string) {
	l.mu.Lock()
	l.lines = append(l.lines, s)
	l.mu.Unlock()
}

// notes are the lines as result notes ("[egress: ...]"); none for nil.
func (l *egressLog) notes() []string {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, len(l.lines))
	for i, s := range l.lines {
		out[i] = "[" + s + "]"
	}
	return out
}

// confine makes spec run through the sandbox helper, with a private
// temporary directory (TMPDIR) that is removed when the call is over, and
// with an egress allowlist the call's proxy (stopped then too), whose
// lines it returns.
func (t *shell) confine(spec *commandSpec) (cleanup func(), el *egressLog, err error) {
	tmp, err := os.MkdirTemp("", "mecha-shell-")
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: private temporary directory: %w", err)
	}
	cleanup = func() { _ = os.RemoveAll(tmp) }
	view := sandbox.View{Workspace: t.ws.Root(), Tmp: tmp, Deny: t.opts.ReadDeny}
	if t.opts.Sandbox.Egress {
		el = &egressLog{}
		e, err := egress.Start(t.opts.AllowDomains, el.add)
		if err != nil {
			cleanup()
			return nil, nil, err
		}
		view.Proxy = e.Socket
		rm := cleanup
		cleanup = func() { _ = e.Close(); rm() }
	}
	c, err := sandbox.Command(t.opts.Sandbox, view, t.opts.Self, t.opts.SelfName, spec.path, spec.argv[1:]...)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	spec.apply, spec.around = c.Apply, c.Start
	if c.Lifeline {
		// The helper supervises the command (see sandbox.Cmd): when the
		// command ends, when mecha closes the lifeline and when mecha
		// dies, it ends every process the command started, those that
		// left the group included. It does not join the orphan guard's
		// group, whose kill would take it before it had done that (and
		// with namespaces the group is outside its namespace).
		spec.guard, spec.lifeline, spec.pidns = false, true, c.Namespaces
	}
	env := spec.env
	if env == nil {
		env = os.Environ()
	}
	spec.path, spec.argv = c.Path, c.Args
	spec.env = append(slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		return strings.HasPrefix(kv, "TMPDIR=")
	}), "TMPDIR="+tmp)
	return cleanup, el, nil
}

// commandSpec is one command to run: path with argv (argv[0] included);
// shell is the shell the orphan guard runs with.
type commandSpec struct {
	shell, path, dir string
	argv             []string
	env              []string
	timeout, grace   time.Duration
	// guard makes the command's processes die with mecha.
	guard bool
	// lifeline says the command is the sandbox's helper, supervising
	// the command (see sandbox.Cmd.Lifeline): it is given the read end of
	// a pipe as descriptor 3, and the write end is closed to end the call.
	lifeline bool
	// pidns says the helper is the first process of a PID namespace of
	// its own (see sandbox.Cmd): its parent-death signal is SIGKILL (the
	// kernel then kills the namespace), else SIGTERM (it cleans up).
	pidns bool
	// apply, when set, completes the command's SysProcAttr (the sandbox's
	// namespaces).
	apply func(*syscall.SysProcAttr)
	// around, when set, is what the command's start runs inside (the
	// sandbox's, see sandbox.Cmd.Start).
	around func(start func() error) error
}
