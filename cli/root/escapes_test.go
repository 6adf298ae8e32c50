//go:build linux

package root_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/cli/root"
	"github.com/mecha-agent/mecha/record/session"
)

// The attack: what a terminal acts on rather than shows. A set-title
// sequence (OSC 0), a clipboard write (OSC 52), a clear screen (CSI 2J)
// and a bidi override, each of which the hostile session carries in its
// title, a file name, a tool name, a tool's input and result, an error, a
// model's name and an imported file's name.
const (
	setTitle  = "\x1b]0;pwned\x07"
	clipboard = "\x1b]52;c;cHduZWQ=\x07"
	clearAll  = "\x1b[2J"
	bidi      = "\u202e"
	attack    = setTitle + clipboard + clearAll + bidi
)

// shown is how Visible writes the attack's start: what a command's output
// holds when the attack reached it, escaped.
const shown = `\x1b]0;pwned\x07`

// escapeCase runs one command on a terminal over the hostile store. Its
// arguments may name {ID} (the hostile run), {IMPORTED} (the session
// imported from a hostile transcript), {WS} (a workspace holding the
// hostile file), {ID2} (a hostile run whose tools all exist, to replay),
// {DIR} (the fixture's directory). want are texts the terminal must show
// (the attack escaped: proof that it got there). Each of keys is typed
// once the terminal shows its text to await. tui says the command draws a
// full-screen interface with escape sequences of its own, so that the
// attack's sequences, not every ESC, are looked for.
type escapeCase struct {
	args []string
	want []string
	keys []key
	tui  bool
}

// key is typed once the terminal shows await.
type key struct{ await, typed string }

// printers classifies every command of the tree: the cases that run it
// on the hostile store, or, for a command that prints nothing recorded in
// a session or said by a tool, why. A command missing here fails
// TestNoEscapeReachesATerminal: whoever adds one says what it prints.
var printers = map[string]struct {
	cases []escapeCase
	none  string
}{
	"mecha": {none: "opens the chat of \"mecha chat\" (cli/chatcmd) with its defaults, run on the hostile session there"},
	"mecha chat": {cases: []escapeCase{{args: []string{"chat", "--resume", "{ID}"}, want: []string{`clip\x1b]52`},
		keys: []key{{"ready", "\x03"}, {"press Ctrl-C again", "\x03"}}, tui: true}}},
	"mecha run": {cases: []escapeCase{
		{args: []string{"run", "--yes", "-w", "{WS}", "--title", "T" + attack, "--mock-script", "{DIR}/hostile.json", "do it"}, want: []string{"answer " + shown, `clip\x1b]52`, `gone\x1b]0;err`}},
	}},
	"mecha replay": {cases: []escapeCase{
		{args: []string{"replay", "--no-session", "--mock-script", "{DIR}/hostile.json", "{ID}"}, want: []string{`clip\x1b]52`}},
		{args: []string{"replay", "--no-session", "--mock-script", "{DIR}/diverge.json", "{ID2}"}, want: []string{`↺ fs_write {"path":"other\u001b]0;pwned`, `"evil\u001b]0;pwned`}},
		{args: []string{"replay", "--no-session", "--json", "--mock-script", "{DIR}/diverge.json", "{ID2}"}, want: []string{`other\u001b]0;pwned`}},
		// The request's changes: a system prompt tried, as a diff.
		{args: []string{"replay", "--no-session", "--system-prompt-file", "{DIR}/prompt.txt", "--mock-script", "{DIR}/diverge.json", "{ID2}"}, want: []string{"+prompt " + shown}},
	}},
	"mecha regress": {cases: []escapeCase{
		{args: []string{"regress", "--no-session", "--pins", "{DIR}/pins.txt", "--mock-script", "{DIR}/diverge.json"}, want: []string{"T" + shown}},
		{args: []string{"regress", "--no-session", "--pins", "{DIR}/pins.txt", "--mock-script", "{DIR}/diverge.json", "--repeat", "2"}, want: []string{"T" + shown}},
		{args: []string{"regress", "--no-session", "--pins", "{DIR}/pins.txt", "--mock-script", "{DIR}/diverge.json", "-m", "a", "-m", "b"}, want: []string{"T" + shown}},
	}},
	"mecha reflect": {cases: []escapeCase{{args: []string{"reflect", "-p", "mock", "--mock-script", "{DIR}/reflect.json", "{ID}"}, want: []string{"lesson " + shown}}}},
	"mecha distill": {cases: []escapeCase{
		{args: []string{"distill", "-p", "mock", "--mock-script", "{DIR}/distill.json"}, want: []string{"rule " + shown}},
		{args: []string{"distill", "--json", "-p", "mock", "--mock-script", "{DIR}/distill.json"}, want: []string{`rule \u001b]0;pwned`}},
	}},
	"mecha learn": {cases: []escapeCase{
		{args: []string{"learn", "--dry-run", "-p", "mock", "--mock-script", "{DIR}/distill.json"}, want: []string{"rule " + shown}},
		{args: []string{"learn", "--list"}, want: []string{"learned " + shown}},
	}},
	"mecha tool call": {cases: []escapeCase{
		{args: []string{"tool", "call", "-w", "{WS}", "fs_read", `{"path":"evil` + jsonEsc(attack) + `.txt"}`}, want: []string{"body " + shown}},
		{args: []string{"tool", "call", "-w", "{WS}", "fs_read", `{"path":"gone` + jsonEsc(attack) + `.txt"}`}, want: []string{"gone" + shown}},
		{args: []string{"tool", "call", "--json", "-w", "{WS}", "fs_read", `{"path":"evil` + jsonEsc(attack) + `.txt"}`}, want: []string{`body \u001b]0;pwned`}},
		{args: []string{"tool", "call", "--yes", "-w", "{WS}", "--mcp-name", "h", "--mcp-command", "mcpserver", "mcp__h__echo", `{"text":"echo ` + jsonEsc(attack) + `"}`}, want: []string{"echo " + shown}},
	}},
	"mecha tool list": {cases: []escapeCase{
		{args: []string{"tool", "list", "--mcp-config", "{DIR}/mcp.json"}, want: []string{"note " + shown}},
		{args: []string{"tool", "list", "--json", "--mcp-config", "{DIR}/mcp.json"}, want: []string{`note \u001b]0;pwned`}},
	}},
	"mecha rewind": {cases: []escapeCase{
		// Refused: the file mecha wrote is not in {DIR}; the refusal names it.
		{args: []string{"rewind", "--to", "1", "-w", "{DIR}", "{ID}"}, want: []string{`evil\x1b]0;pwned`}},
	}},
	"mecha rerun": {cases: []escapeCase{
		{args: []string{"rerun", "--yes", "--diff", "--no-session", "-w", "{WS}", "{ID}"}, want: []string{`clip\x1b]52`}},
		{args: []string{"rerun", "--yes", "--json", "--no-session", "-w", "{WS}", "{ID}"}, want: []string{`clip\u001b]52`}},
	}},
	"mecha script": {cases: []escapeCase{
		{args: []string{"script", "-o", "-", "{ID}"}, want: []string{`clip\x1b]52`}},
		{args: []string{"script", "{IMPORTED}"}, want: []string{"scripts/replay_"}},
	}},
	"mecha mcp call":  {cases: []escapeCase{{args: []string{"mcp", "call", "--command", "mcpserver -version 9" + setTitle, "x", "echo", `{"text":"echo ` + jsonEsc(attack) + `"}`}, want: []string{"echo " + shown}}}},
	"mecha mcp list":  {cases: []escapeCase{{args: []string{"mcp", "list", "--mcp-config", "{DIR}/mcp.json"}, want: []string{"9" + shown}}}},
	"mecha mcp serve": {none: "speaks MCP (JSON-RPC) on stdio to a client, not to a person"},
	"mecha mcp proxy": {none: "forwards MCP (JSON-RPC) between a client and a server on stdio, not to a person"},
	"mecha import": {cases: []escapeCase{
		{args: []string{"import", "claude-code", "{DIR}/cc" + attack + ".jsonl"}, want: []string{"cc" + shown}},
		{args: []string{"import", "--json", "claude-code", "{DIR}/cc" + attack + ".jsonl"}, want: []string{`cc\u001b]0;pwned`}},
	}},
	"mecha sessions list": {cases: []escapeCase{
		{args: []string{"sessions", "list"}, want: []string{"T" + shown}},
		{args: []string{"sessions", "list", "--json"}, want: []string{`T\u001b]0;pwned`}},
	}},
	"mecha sessions show": {cases: []escapeCase{
		{args: []string{"sessions", "show", "--full", "{ID}"}, want: []string{`clip\x1b]52`, "body " + shown, `gone\x1b]0;err`}},
		{args: []string{"sessions", "show", "--json", "{ID}"}, want: []string{`clip\u001b]52`}},
		{args: []string{"sessions", "show", "{IMPORTED}"}, want: []string{"claude" + shown}},
	}},
	"mecha sessions search": {cases: []escapeCase{{args: []string{"sessions", "search", "body"}, want: []string{"»body« " + shown}}}},
	"mecha sessions stats":  {cases: []escapeCase{{args: []string{"sessions", "stats"}, want: []string{"claude" + shown}}}},
	"mecha sessions export": {cases: []escapeCase{
		{args: []string{"sessions", "export", "{ID}"}, want: []string{`clip\x1b]52`, "body " + shown, `gone\x1b]0;err`}},
		{args: []string{"sessions", "export", "--format", "html", "{ID}"}, want: []string{`clip\x1b]52`}},
		{args: []string{"sessions", "export", "--format", "json", "{ID}"}, want: []string{`clip\u001b]52`}},
		{args: []string{"sessions", "export", "--format", "inspect", "{ID}"}, want: []string{`clip\u001b]52`, `\u202e`}},
	}},
	"mecha sessions rm":      {none: "asks about and names the sessions it removes by their ids"},
	"mecha sessions prune":   {none: "names the sessions it removes by their ids"},
	"mecha sessions view":    {none: "writes the page to a file (HTML, which escapes the transcript) and prints its path, made of the session's id"},
	"mecha sessions path":    {none: "prints the path of the session's file, made of its id"},
	"mecha sessions push":    {none: "prints ids of the store, actions, sizes and the remote's name from config.toml (needs an S3 server: cli/root/testdata/remote)"},
	"mecha sessions pull":    {none: "prints ids the index names only once session.ValidID accepts them, actions, sizes and the remote's name"},
	"mecha sessions share":   {none: "prints what it withheld through Env.ForErr (a role or a tool name from the transcript escaped), counts and presigned links"},
	"mecha regress pin":      {none: "prints the pinned session's id and the remote's name"},
	"mecha regress report":   {none: "prints the table of mecha regress through the same printRegress the regress cases above run on the hostile store; a shard's titles and errors are another machine's, shown the same way"},
	"mecha sessions reindex": {none: "counts the sessions it indexed and names the store's directory"},
	"mecha __complete":       {cases: []escapeCase{{args: []string{"__complete", "sessions", "show", ""}, want: []string{"T" + shown}}}},
	"mecha __completeNoDesc": {cases: []escapeCase{{args: []string{"__completeNoDesc", "sessions", "show", ""}}}},
	"mecha doctor": {cases: []escapeCase{
		{args: []string{"doctor", "--timeout", "1ms", "--mcp-config", "{DIR}/mcp-bad.json"}, want: []string{`nothing\x1b]0;pwned`}},
		{args: []string{"doctor", "--json", "--timeout", "1ms", "--mcp-config", "{DIR}/mcp-bad.json"}, want: []string{`nothing\\x1b]0;pwned`}},
	}},
	"mecha config":                      {none: "help only"},
	"mecha config path":                 {none: "prints the configuration file's path"},
	"mecha config show":                 {none: "prints the person's own configuration"},
	"mecha trust":                       {none: "prints the person's own trusted directories (escaped on a terminal)"},
	"mecha sessions":                    {none: "help only"},
	"mecha tool":                        {none: "help only"},
	"mecha mcp":                         {none: "help only"},
	"mecha completion":                  {none: "help only"},
	"mecha completion bash":             {none: "a completion script, the same for everyone"},
	"mecha completion zsh":              {none: "a completion script, the same for everyone"},
	"mecha completion fish":             {none: "a completion script, the same for everyone"},
	"mecha completion powershell":       {none: "a completion script, the same for everyone"},
	"mecha help":                        {none: "help text"},
	"mecha completion __complete":       {none: "completes the completion command's own words"},
	"mecha completion __completeNoDesc": {none: "completes the completion command's own words"},
}

// TestNoEscapeReachesATerminal walks the command tree: every command is
// classified in printers, and each case of one that prints what a session
// recorded or a tool said runs the real binary on a pseudo-terminal
// (stdin, stdout and stderr), over a store whose sessions carry the
// attack everywhere a transcript can. No raw ESC, BEL or bidi override may
// reach the terminal (for a full-screen interface: none of the attack's
// sequences), and the terminal must show the attack escaped. The control:
// the store's sessions hold the attack's bytes.
func TestNoEscapeReachesATerminal(t *testing.T) {
	t.Parallel()
	var walk func(c *cobra.Command)
	seen := map[string]bool{}
	walk = func(c *cobra.Command) {
		path := c.CommandPath()
		seen[path] = true
		p, ok := printers[path]
		switch {
		case !ok:
			t.Errorf("%q is not classified in printers: say what it prints of a session or a tool, and run it on the hostile store", path)
		case p.none == "" && len(p.cases) == 0:
			t.Errorf("%q: neither cases nor a reason", path)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root.NewCmdRoot(&cmdkit.Env{Out: io.Discard, Err: io.Discard}))
	for path := range printers {
		// cobra adds its completion commands when it runs.
		if !seen[path] && !strings.Contains(path, "__complete") {
			t.Errorf("printers names %q, which the tree does not have", path)
		}
	}
	fx := newEscapeFixture(t)
	for path, p := range printers {
		for i, c := range p.cases {
			t.Run(strings.ReplaceAll(path, " ", "_")+"/"+string(rune('0'+i)), func(t *testing.T) {
				t.Parallel()
				fx.run(t, c)
			})
		}
	}
}

// escapeFixture is the hostile store, built once, copied for each case.
type escapeFixture struct {
	dir               string // bin/, home/, ws/ and the scripts
	id, id2, imported string
}

func newEscapeFixture(t *testing.T) *escapeFixture {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	fx := &escapeFixture{dir: t.TempDir()}
	for _, d := range []string{"bin", "home", "ws"} {
		if err := os.Mkdir(filepath.Join(fx.dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"mecha", "mcpserver"} {
		if err := os.Symlink(exe, filepath.Join(fx.dir, "bin", name)); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		"hostile.json": `{"turns": [
 {"text": "start ` + jsonEsc(attack) + `", "tool_calls": [{"name": "fs_write", "input": {"path": "evil` + jsonEsc(attack) + `.txt", "content": "body ` + jsonEsc(attack) + `\n"}}]},
 {"tool_calls": [{"name": "fs_read", "input": {"path": "evil` + jsonEsc(attack) + `.txt"}}, {"name": "fs_read", "input": {"path": "gone` + jsonEsc("\x1b]0;err\x07"+attack) + `.txt"}}]},
 {"tool_calls": [{"name": "clip` + jsonEsc(clipboard+attack) + `", "input": {"x": "` + jsonEsc(attack) + `"}}]},
 {"text": "answer ` + jsonEsc(attack) + `"}
]}`,
		"replayable.json": `{"turns": [
 {"tool_calls": [{"name": "fs_write", "input": {"path": "evil` + jsonEsc(attack) + `.txt", "content": "body ` + jsonEsc(attack) + `\n"}}]},
 {"text": "answer ` + jsonEsc(attack) + `"}
]}`,
		"diverge.json": `{"turns": [
 {"tool_calls": [{"name": "fs_write", "input": {"path": "other` + jsonEsc(attack) + `.txt", "content": "body ` + jsonEsc(attack) + `\n"}}]},
 {"text": "answer ` + jsonEsc(attack) + `"}
]}`,
		"reflect.json": `{"turns": [{"text": "lesson ` + jsonEsc(attack) + `\n- rule ` + jsonEsc(attack) + `"}]}`,
		"prompt.txt":   "prompt " + attack + "\n",
		"distill.json": `{"turns": [{"text": "- rule ` + jsonEsc(attack) + `"}]}`,
		"mcp.json":     `{"mcpServers": {"h": {"command": "mcpserver", "args": ["-version", "9` + jsonEsc(attack) + `", "-note", " note ` + jsonEsc(attack) + `"]}}}`,
		"cc" + attack + ".jsonl": `{"parentUuid":null,"type":"user","sessionId":"0b6c3f7e-1111-4222-8333-944445555666","cwd":"/w","version":"1.0.51","message":{"role":"user","content":"hi ` + jsonEsc(attack) + `"},"uuid":"u1","timestamp":"2025-07-10T10:00:00.000Z"}
{"parentUuid":"u1","type":"assistant","sessionId":"0b6c3f7e-1111-4222-8333-944445555666","cwd":"/w","version":"1.0.51","message":{"id":"m1","type":"message","role":"assistant","model":"claude` + jsonEsc(attack) + `","content":[{"type":"text","text":"ok ` + jsonEsc(attack) + `"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}},"uuid":"a1","timestamp":"2025-07-10T10:00:01.000Z"}
`,
		"mcp-bad.json":          `{"mcpServers": {"bad": {"command": "nothing` + jsonEsc(attack) + `"}}}`,
		"home/learned_rules.md": "- learned " + attack + " <!-- mecha: from: 20260101T000000-00000001 -->\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(fx.dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mecha := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(fx.dir, "bin", "mecha"), args...)
		cmd.Dir, cmd.Env = fx.dir, fx.env(fx.dir)
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("mecha %q: %v\n%s%s", args, err, out.String(), stderr.String())
		}
		return out.String()
	}
	// The workspace is trusted, so the reflection on its session is kept
	// (private only) and distill shows its rule.
	mecha("trust", filepath.Join(fx.dir, "ws"))
	mecha("run", "--yes", "-w", filepath.Join(fx.dir, "ws"), "--title", "T"+attack, "--mock-script", filepath.Join(fx.dir, "hostile.json"), "do it")
	fx.id = newestSession(t, fx.dir)
	mecha("run", "--yes", "-w", filepath.Join(fx.dir, "ws"), "--title", "T"+attack, "--mock-script", filepath.Join(fx.dir, "replayable.json"), "do it")
	fx.id2 = newestSession(t, fx.dir)
	out := mecha("import", "claude-code", filepath.Join(fx.dir, "cc"+attack+".jsonl"))
	fx.imported, _, _ = strings.Cut(out, " ")
	mecha("reflect", "-p", "mock", "--mock-script", filepath.Join(fx.dir, "reflect.json"), fx.id)
	if err := os.WriteFile(filepath.Join(fx.dir, "pins.txt"), []byte(fx.id2+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	// The control: the attack is in the sessions, raw once decoded,
	// wherever the cases look for it escaped.
	s, err := session.Load(filepath.Join(fx.dir, "home", "sessions", fx.id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var held []string
	held = append(held, s.Meta.Title)
	for _, m := range s.Messages() {
		for _, b := range m.Content {
			held = append(held, b.Text, b.Name, string(b.Input), b.Content)
		}
	}
	all := strings.Join(held, "\n")
	for _, want := range []string{"T" + attack, "clip" + clipboard + attack, "body " + attack, "gone\x1b]0;err\x07" + attack, "answer " + attack} {
		if !strings.Contains(all, want) && !strings.Contains(all, jsonEsc(want)) {
			t.Fatalf("the hostile session does not hold %q: the test could not fail", want)
		}
	}
	imp, err := session.Load(filepath.Join(fx.dir, "home", "sessions", fx.imported+".jsonl"))
	if err != nil || !strings.Contains(imp.Meta.Model, attack) {
		t.Fatalf("the imported session's model %q (%v): the test could not fail", imp.Meta.Model, err)
	}
	return fx
}

// jsonEsc is s as a JSON string's content.
func jsonEsc(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&0xf])
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func newestSession(t *testing.T, dir string) string {
	t.Helper()
	store := &session.Store{Dir: filepath.Join(dir, "home", "sessions")}
	l, err := store.List()
	if err != nil || len(l.Sessions) == 0 {
		t.Fatalf("no session: %v", err)
	}
	return l.Sessions[0].Meta.ID // newest first
}

// env is the environment of a mecha run in the fixture copy at dir.
func (fx *escapeFixture) env(dir string) []string {
	return []string{"PATH=" + filepath.Join(fx.dir, "bin") + ":/usr/bin:/bin", "HOME=" + dir, "MECHA_HOME=" + filepath.Join(dir, "home"),
		"TERM=xterm-256color", "PAGER=cat", "TZ=UTC", "LANG=C.UTF-8", "NO_COLOR=1"}
}

// run runs one case on a copy of the store, on a fresh pseudo-terminal.
func (fx *escapeFixture) run(t *testing.T, c escapeCase) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(fx.dir)); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(dir, "bin"))
	args := make([]string, len(c.args))
	for i, a := range c.args {
		a = strings.ReplaceAll(a, "{ID}", fx.id)
		a = strings.ReplaceAll(a, "{ID2}", fx.id2)
		a = strings.ReplaceAll(a, "{IMPORTED}", fx.imported)
		a = strings.ReplaceAll(a, "{WS}", filepath.Join(dir, "ws"))
		args[i] = strings.ReplaceAll(a, "{DIR}", dir)
	}
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	if err := pty.Setsize(tty, &pty.Winsize{Rows: 40, Cols: 200}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(fx.dir, "bin", "mecha"), args...)
	cmd.Args[0] = "mecha"
	cmd.Dir, cmd.Env = filepath.Join(dir, "ws"), fx.env(dir)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	term := readTerminal(ptmx)
	// A command waiting for an answer it was not given is a failure, not
	// a hang of the suite.
	stop := time.AfterFunc(time.Minute, func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	defer stop.Stop()
	for _, k := range c.keys {
		term.waitFor(t, k.await)
		ptmx.WriteString(k.typed)
	}
	werr := cmd.Wait()
	<-term.done
	out := []byte(term.text())
	t.Logf("mecha %q (%v) wrote:\n%s", args, werr, out)
	// mecha's own: regress's progress line, rewritten in place.
	out = bytes.ReplaceAll(out, []byte("\r\x1b[K"), []byte("\r"))
	if c.tui {
		for _, seq := range []string{setTitle, clipboard, "\x1b]0;", "\x1b]52;", bidi} {
			if bytes.Contains(out, []byte(seq)) {
				t.Errorf("mecha %q sent %q raw to the terminal", c.args, seq)
			}
		}
	} else if i := bytes.IndexAny(out, "\x1b\x07"+bidi); i >= 0 {
		t.Errorf("mecha %q sent a raw control to the terminal at %d: %q", c.args, i, out[max(0, i-40):min(len(out), i+40)])
	}
	for _, w := range c.want {
		if !bytes.Contains(out, []byte(w)) {
			t.Errorf("mecha %q: the terminal does not show %q", c.args, w)
		}
	}
}
