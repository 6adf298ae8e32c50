// Package chat is "mecha chat" (and "mecha" alone on a terminal): the
// interactive mode, a terminal UI on bubbletea over the same recorded
// sessions as "mecha run".
package chatcmd

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/cli/attach"
	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/harness/config"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/internal/workdir"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// Options are the options of "mecha chat".
type Options struct {
	Env *cmdkit.Env
	// Settings are the flags that shape an attach, declared once in
	// cli/attach and shared with run: each prompt is an attach resolved
	// from them as "mecha run --resume" resolves one.
	Settings harness.Settings
	Resume   string
	Continue bool
	// Title is --title: the title of the session the chat starts (not of
	// those /new starts after it).
	Title string
	// Prompt, when given, is sent as the chat opens.
	Prompt string
	Given  func(name string) bool
}

// NewCmdChat builds "mecha chat". runF, when not nil, runs in place of the
// command once its flags are parsed and checked (tests use it).
func NewCmdChat(env *cmdkit.Env, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Env: env, Settings: harness.DefaultSettings()}
	cmd := &cobra.Command{
		Use:   `chat [--resume ID | -c] ["<prompt>"]`,
		Short: "Talk to an agent in the terminal, every turn recorded as a session",
		Long: `Open the interactive mode: a conversation above an input box, the model's
text as it streams (then as rendered Markdown), each tool call as a line
with a spinner and then its outcome, size and time, and a status line with
the session, model, tokens, cost (at config.toml's prices) and taint:
clean, private, untrusted or armed. "mecha" alone on a terminal does the
same. Nothing from a model, a tool or a transcript reaches the terminal
raw: control characters and escape sequences are shown as text (\x1b).

Each prompt is one run over the same session, recorded exactly as mecha run
records it, so a chat can be listed, shown, resumed, replayed and scripted
like any session. The chat holds the session's one-writer lock while it is
open, and when it ends prints the session id and how to resume it.

Calls that need permission are put to you inline: y allows the call once,
n denies it (then type why and press Enter: the sentence goes to the model
with the denial; Enter alone gives no reason), a allows the tool for the
rest of the session, and r, offered for a command or a file write, allows
it and saves the rule (allow "shell(go test ./...)") for this workspace in
$MECHA_HOME/permissions.toml, so later sessions here run it unasked
(mecha config --help has the rules). A write or an edit shows its diff, a
command its text. A call's time leaves out the time its question waited
for you. With --trifecta ask the
interlock's question comes the same way, with its reason, each time. A
prompt takes its answer only once it shows its choices, when it has been
on the screen for a second with no key pressed; until then, and for any
other key, what you type goes to the input box. So text typed ahead while
the model works stays there and never answers a prompt, and neither does
a paste.

A paste goes into the input box whole, newlines and all, and is sent when
you press Enter. Terminals mark a paste (bracketed paste); where one does
not, lines that arrive together are taken as one paste all the same.

@FILE in a prompt (Tab completes it from the workspace's files) sends the
file's content after the prompt: read inside the workspace as fs_read
reads (a path or link leading out of it is refused, and the prompt stays
in the box), text only, at most 256 KiB, and the conversation is private
from then on, as after fs_read. An @word that names no file is left as
text.

/compact [INSTRUCTIONS] replaces the conversation before the last answer
with a summary the model writes (following INSTRUCTIONS), recorded as a
compaction record, so a resume or a replay sees what the model saw; with
--compact-at-tokens the chat compacts by itself as mecha run does, between
prompts too. /clear (or /new) starts a new session: nothing of the one
before is carried.

/rewind N puts back the files fs_write and fs_edit changed since prompt N
(byte for byte, or removed if they created them) and continues from before
that prompt in a new session forked from this one; it names the commands
and other calls it cannot undo, and refuses, touching nothing, when a file
changed outside mecha since (mecha rewind --help has the details). /rewind
alone lists the prompts.

What you send while tools run is steering: it goes to the model beside
those tools' results, in the same message (a replay of the session notes
it). Text sent while the model writes and no call follows becomes the next
prompt. Esc interrupts a run (the calls it cut are recorded with their
results and the run with its summary, so the session can be resumed);
Ctrl-C once says how to quit, twice quits; Ctrl-D on an empty input box,
/exit and /quit leave at once.

The prompts you send are kept per workspace, across chats, in
$MECHA_HOME/history (the last 500, readable by you only): Up and Down bring
them back, Ctrl-R searches them. A prompt that holds a paste stays in this
chat's history but is never written there: a paste is where keys and
tokens arrive. Ctrl-G opens the input box in $VISUAL or $EDITOR and takes
back what you save. Typing / shows the commands that match (Tab
completes); an unknown one is answered with the nearest. /model alone
offers the models mecha knows for the provider (config.toml's, the price
table's, and those the provider lists); /resume alone, or with words that
name no session, offers this workspace's sessions with their dates and
titles, filtered as you type.

Answers are rendered as Markdown (headings, bold, italics, lists, tables,
links with their address, code); the model's thinking is folded under its
answer (Ctrl-T shows it). The wheel and PgUp/PgDn scroll; when output
arrives below while you read above, a marker says so, and End goes there
(hold Shift to select text with the mouse). When the chat ends, the
conversation is printed to the terminal's own screen, so it stays in its
scrollback. When a permission question waits or a run ends while the
terminal's window is not focused, the chat rings the bell, or sends a
desktop notification: [chat] notify in config.toml ("bell", "osc9",
"osc777" or "off"; mecha config --help).

When the chat opens in a workspace you have not trusted (mecha trust --help),
it asks once, before any prompt runs, by the same rule as a permission
prompt: y trusts the directory (written to trusted_workspaces in config.toml,
as mecha trust does), n goes on untrusted for this chat (asked again next
time). Untrusted, what the tools read there counts as untrusted content, so
tools that can send data out are refused after the first read, and the
workspace's AGENTS.md or CLAUDE.md is left out of the system prompt.

The chat needs a terminal on stdin and stdout; off one it exits 2. In
scripts, use mecha run.

Keys:
` + indent(Keys) + `

Slash commands:
` + indent(strings.TrimRight(slashList(), "\n")),
		Args: cmdkit.RangeArgs(0, 1, "the first prompt, if any (quote it)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Prompt = args[0]
			}
			opts.Given = cmdkit.Changed(cmd)
			opts.Settings.Given = opts.Given
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return chatRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	attach.Flags(cmd, &opts.Settings)
	f.StringVar(&opts.Title, "title", "", "the session's title (default: the first prompt's first line)")
	f.StringVar(&opts.Resume, "resume", "", "continue the session `ID` (an id, a prefix or last)")
	f.BoolVarP(&opts.Continue, "continue", "c", false, "continue the newest session of this workspace that is not a replay, rerun or reflection")
	return cmd
}

// indent indents each line of s two spaces.
func indent(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}

// validate checks the flags before anything is opened.
func (o *Options) validate() error {
	switch {
	case o.Resume != "" && o.Continue:
		return cmdkit.Usagef("--resume and -c both name the session to continue; give one")
	case o.Resume == "" && o.Given != nil && o.Given("resume"):
		return cmdkit.Usagef("--resume needs a session id (or %s)", session.Last)
	case o.Title != "" && (o.Resume != "" || o.Continue):
		return cmdkit.Usagef("--title names a new session; --resume and -c continue one")
	}
	return attach.Usage(o.Settings.Validate())
}

// Interactive is "mecha" alone on a terminal: a chat with the defaults.
func Interactive(ctx context.Context, env *cmdkit.Env) error {
	return chatRun(ctx, &Options{Env: env, Settings: harness.DefaultSettings()})
}

func chatRun(ctx context.Context, opts *Options) error {
	if !opts.Env.InTTY || !opts.Env.OutTTY {
		return cmdkit.Usagef("mecha chat needs a terminal on stdin and stdout (mecha run takes a task in scripts)")
	}
	var r relay
	eng, m, err := setup(ctx, opts, r.send)
	if err != nil {
		return err
	}
	p := tea.NewProgram(m, programOptions(ctx, opts.Env)...)
	r.attach(p.Send)
	_, runErr := p.Run()
	// Whatever ended the program, the run in progress ends first, its
	// records closed, and the session is let go.
	eng.interrupt()
	eng.wait()
	eng.close()
	if err := m.hist.flush(); err != nil { // a write the program's end cut short
		fmt.Fprintf(opts.Env.Err, "mecha: the prompt history was not saved: %s\n", opts.Env.ForErr(err.Error()))
	}
	// The chat drew on the alternate screen, gone now: the conversation
	// is printed to the terminal's own screen, to stay in its scrollback.
	if text := m.scrollback(); text != "" {
		fmt.Fprintln(opts.Env.Out, text)
	}
	if id := eng.current().ID; id != "" {
		fmt.Fprintf(opts.Env.Err, "session: %s (mecha chat --resume %s)\n", id, id)
	}
	if runErr != nil && ctx.Err() != nil {
		return &cmdkit.InterruptedError{Msg: "interrupted; the transcript keeps everything up to here"}
	}
	return runErr
}

// programOptions run the program on the command's terminal, with the
// command's environment (for the terminal's type and colours): with colour
// off (NO_COLOR, TERM=dumb) styles keep their attributes and lose colours.
func programOptions(ctx context.Context, env *cmdkit.Env) []tea.ProgramOption {
	o := []tea.ProgramOption{tea.WithInput(env.In), tea.WithOutput(env.Out), tea.WithContext(ctx)}
	if e := env.Environ.List(); e != nil {
		o = append(o, tea.WithEnvironment(e))
	}
	if !env.Color() {
		o = append(o, tea.WithColorProfile(colorprofile.Ascii))
	}
	return o
}

// setup builds the chat: its configuration, the session it resumes, the
// MCP servers, the engine and the screen. send delivers messages to the
// program (the real one, or a test's).
func setup(ctx context.Context, opts *Options, send func(tea.Msg)) (*engine, *model, error) {
	ref, err := sessionToResume(opts)
	if err != nil {
		return nil, nil, err
	}
	chatEnv := *opts.Env
	chatEnv.Err = &noteWriter{send: send}
	eng := &engine{env: &chatEnv, base: ctx, given: opts.Given, overrides: map[string]bool{},
		asker: &asker{send: send, save: func(ws, rule string) error {
			return harness.SaveAllowRule(attach.World(&chatEnv), ws, rule)
		}}, send: send}
	settings := opts.Settings
	settings.Given = eng.isGiven
	// The door opens on a new session; the one to resume is switched to
	// below, as /resume switches, so that it is shown.
	door, err := harness.Open(ctx, attach.World(&chatEnv), harness.Attach{Settings: settings, Asker: eng.asker, Quiet: true,
		Meta: transcript.Meta{Title: opts.Title}})
	if err != nil {
		return nil, nil, err
	}
	eng.door = door
	cfg := door.Config()
	m := newModel(eng, newStyles(opts.Env.Color()), newMarkdown(opts.Env.Color()))
	m.now = opts.Env.Clock.Now
	m.status.provider, m.status.model = settings.Provider, settings.Model
	if !eng.isGiven("provider") && cfg.DefaultProvider != "" {
		m.status.provider = cfg.DefaultProvider
	}
	if m.status.model == "" {
		m.status.model = harness.DefaultModel(cfg, m.status.provider)
	}
	m.first = strings.TrimSpace(opts.Prompt)
	m.hist = openHistory(opts.Env, settings.Workspace)
	m.notifyMode = cfg.Chat.Notify
	if !ref.IsZero() {
		s, err := eng.switchTo(ref)
		if err != nil {
			eng.close()
			return nil, nil, err
		}
		m.showSession(s)
	}
	provider := m.status.provider
	if eng.isGiven("provider") {
		provider = settings.Provider
	}
	if err := canBuild(&chatEnv, cfg, settings, provider); err != nil {
		m.add(entry{kind: kError, text: textfmt.Visible(err.Error())})
	}
	// The workspace's one question, before any prompt: asked when no
	// entry of trusted_workspaces covers it.
	if dir, err := door.Workspace(); err == nil && !door.Trusted(dir) {
		m.asks = append(m.asks, askMsg{trust: dir, reply: make(chan answer, 1)})
	}
	return eng, m, nil
}

// canBuild builds the provider the first prompt will call, as the door
// will, and says what stops it (a key not set) with its fix: when the chat
// opens rather than after the first prompt. Nothing is sent.
func canBuild(env *cmdkit.Env, cfg *config.Config, s harness.Settings, provider string) error {
	_, err := harness.NewProvider(attach.World(env), provider,
		harness.ProviderSetup{MockScript: s.MockScript, Config: cfg, RequestTimeout: s.RequestTimeout})
	v := notSet().FindStringSubmatch(fmt.Sprint(err))
	if v == nil {
		return err
	}
	return fmt.Errorf("%w: export %s=<your key> and start the chat again, or choose another provider: -p NAME, or default_provider in config.toml (mecha config path says where, mecha config --help how)", err, v[1])
}

// notSet finds the variable in the error of a provider whose key is unset.
var notSet = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b([A-Z][A-Z0-9_]*) is not set\b`) })

// openHistory is the prompt history of the workspace, in memory only
// when $MECHA_HOME or the workspace cannot be named.
func openHistory(env *cmdkit.Env, workspace string) *history {
	home, err := env.Home()
	ws, werr := workdir.Dir(workspace)
	if err != nil || werr != nil {
		return &history{}
	}
	return loadHistory(historyPath(home, workdir.Canonical(ws)))
}

// sessionToResume is the session --resume or -c names (zero for a new one).
func sessionToResume(opts *Options) (session.Ref, error) {
	switch {
	case opts.Resume != "":
		return opts.Env.ResolveSession(opts.Resume)
	case opts.Continue:
		return opts.Env.ContinueID(opts.Settings.Workspace)
	}
	return session.Ref{}, nil
}

// relay delivers messages to the program, keeping those sent before it
// exists (notes written while the chat is set up).
type relay struct {
	mu      sync.Mutex
	to      func(tea.Msg)
	pending []tea.Msg
}

func (r *relay) send(msg tea.Msg) {
	r.mu.Lock()
	to := r.to
	if to == nil {
		r.pending = append(r.pending, msg)
	}
	r.mu.Unlock()
	if to != nil {
		to(msg)
	}
}

// attach delivers to to (a program's Send) from now on, and sends what
// was kept once the program reads its messages.
func (r *relay) attach(to func(tea.Msg)) {
	r.mu.Lock()
	r.to = to
	pending := r.pending
	r.pending = nil
	r.mu.Unlock()
	go func() {
		for _, msg := range pending {
			to(msg)
		}
	}()
}

// noteWriter shows what the chat's commands write to their error stream
// as lines of the conversation.
type noteWriter struct {
	send func(tea.Msg)
}

func (w *noteWriter) Write(p []byte) (int, error) {
	if s := strings.TrimRight(string(p), "\n"); s != "" {
		w.send(noteMsg(textfmt.Visible(s)))
	}
	return len(p), nil
}

var _ io.Writer = (*noteWriter)(nil)
