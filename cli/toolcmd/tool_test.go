package toolcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/record/transcript"
	"github.com/mecha-agent/mecha/testkit/cmdtest"
)

func TestCallFlags(t *testing.T) {
	t.Parallel()
	var got *CallOptions
	cmd := NewCmdCall(&cmdkit.Env{}, func(_ context.Context, o *CallOptions) error { got = o; return nil })
	if err := cmdtest.Execute(cmd, "fs_write", `{"path":"a"}`, "-w", "/tmp", "--yes", "--json"); err != nil {
		t.Fatal(err)
	}
	if got.Name != "fs_write" || got.Input != `{"path":"a"}` || got.Workspace != "/tmp" || !got.Yes || !got.JSON {
		t.Errorf("parsed %+v", got)
	}
	cmd = NewCmdCall(&cmdkit.Env{}, func(_ context.Context, o *CallOptions) error { got = o; return nil })
	if err := cmdtest.Execute(cmd, "fs_read", "-"); err != nil || got.Input != "-" {
		t.Errorf("stdin input: %v %+v", err, got)
	}
	if got.Trifecta != "refuse" || got.surface().Taint != (transcript.Taint{}) {
		t.Errorf("defaults: trifecta %q, taint %+v", got.Trifecta, got.surface().Taint)
	}
	cmd = NewCmdCall(&cmdkit.Env{}, func(_ context.Context, o *CallOptions) error { got = o; return nil })
	if err := cmdtest.Execute(cmd, "web_fetch", "--taint", "untrusted,private", "--trifecta", "ask"); err != nil {
		t.Fatal(err)
	}
	if spec := got.surface(); spec.Taint != (transcript.Taint{Private: true, Untrusted: true}) || spec.TaintWhy != "--taint private,untrusted" || spec.Trifecta != "ask" {
		t.Errorf("--taint: %+v", spec)
	}
}

func TestCallFlagsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "needs a tool name"},
		{[]string{"a", "{}", "extra"}, "needs a tool name"},
		{[]string{"fs_read", "[1]"}, "not a JSON object"},
		{[]string{"fs_read", "null"}, "not a JSON object"},
		{[]string{"fs_read", `{"a":1} {}`}, "trailing data"},
		{[]string{"fs_read", "{"}, "not a JSON object"},
		{[]string{"fs_read", "--yes", "--read-only"}, "contradict"},
		{[]string{"fs_read", "--taint", "armed"}, `--taint: tool: unknown taint "armed"`},
		{[]string{"fs_read", "--trifecta", "maybe"}, "--trifecta must be refuse, ask or off"},
	} {
		cmd := NewCmdCall(&cmdkit.Env{}, func(context.Context, *CallOptions) error { t.Error("ran despite bad usage"); return nil })
		err := cmdtest.Execute(cmd, tc.args...)
		var ue *cmdkit.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want a usage error containing %q", tc.args, err, tc.want)
		}
	}
}

// TestCallRuns runs real calls: the result goes to stdout and an error
// result is a ToolError, an unknown tool a usage error.
func TestCallRuns(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(in string, args ...string) (string, error) {
		var out bytes.Buffer
		env := &cmdkit.Env{In: strings.NewReader(in), Out: &out, Err: &bytes.Buffer{}}
		err := cmdtest.Execute(NewCmdCall(env, nil), append(args, "-w", ws)...)
		return out.String(), err
	}
	if out, err := run("", "fs_read", `{"path":"a.txt"}`); err != nil || out != "hello\n" {
		t.Errorf("fs_read: %q %v", out, err)
	}
	var te *cmdkit.ToolError
	if out, err := run("", "fs_write", `{"path":"b.txt","content":"x"}`); !errors.As(err, &te) || !strings.HasPrefix(out, "denied") {
		t.Errorf("fs_write with nobody to ask: %q %v, want a denial", out, err)
	}
	if out, err := run(`{"path":"b.txt","content":"x"}`+"\n", "fs_write", "-", "--yes", "--json"); err != nil {
		t.Errorf("fs_write --yes: %v", err)
	} else {
		var r callResult
		if err := json.Unmarshal([]byte(out), &r); err != nil || r.Name != "fs_write" || r.IsError || string(r.Input) == "" {
			t.Errorf("--json: %q %v", out, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(ws, "b.txt")); err != nil || string(b) != "x" {
		t.Errorf("b.txt: %q %v", b, err)
	}
	if _, err := run("", "fs_write", `{"path":"c.txt","content":"x"}`, "--read-only"); !errors.As(err, &te) {
		t.Errorf("--read-only: %v, want a ToolError", err)
	}
	var ue *cmdkit.UsageError
	if _, err := run("", "no_such_tool"); !errors.As(err, &ue) {
		t.Errorf("unknown tool: %v, want a usage error", err)
	}
	if _, err := run("[]", "fs_read", "-"); !errors.As(err, &ue) {
		t.Errorf("stdin not an object: %v, want a usage error", err)
	}
}

// TestCallOutputOnATerminal: a result holding a set-title sequence is
// shown escaped on a terminal and passed byte for byte to a pipe (the
// control: the bytes are there to escape).
func TestCallOutputOnATerminal(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	hostile := "before\x1b]0;pwned\x07after\n"
	if err := os.WriteFile(filepath.Join(ws, "evil.txt"), []byte(hostile), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tty := range []bool{true, false} {
		var out bytes.Buffer
		env := &cmdkit.Env{In: strings.NewReader(""), Out: &out, OutTTY: tty, Err: &bytes.Buffer{}}
		if err := cmdtest.Execute(NewCmdCall(env, nil), "fs_read", `{"path":"evil.txt"}`, "-w", ws); err != nil {
			t.Fatal(err)
		}
		switch got := out.String(); {
		case tty && got != `before\x1b]0;pwned\x07after`+"\n":
			t.Errorf("terminal: %q", got)
		case !tty && got != hostile:
			t.Errorf("pipe: %q", got)
		}
	}
}

// TestCallTaint: a call that reaches the network, started by --taint in an
// armed conversation, is refused and sends nothing, and so is one started
// in an untrusted conversation to a host no --trust-host names; the
// controls: private alone, untrusted with the host trusted, or --trifecta
// off, send it.
func TestCallTaint(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.RawQuery)
		mu.Unlock()
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	ws := t.TempDir()
	call := func(q string, args ...string) (string, error) {
		var out bytes.Buffer
		env := &cmdkit.Env{In: strings.NewReader(""), Out: &out, Err: &bytes.Buffer{}}
		in := fmt.Sprintf(`{"url":%q}`, srv.URL+"/x?d="+q)
		err := cmdtest.Execute(NewCmdCall(env, nil), append([]string{"web_fetch", in, "-w", ws, "--yes"}, args...)...)
		return out.String(), err
	}
	var te *cmdkit.ToolError
	out, err := call("armed", "--taint", "private,untrusted")
	if !errors.As(err, &te) || !strings.HasPrefix(out, tool.RefusalPrefix+" the conversation holds private data (--taint private,untrusted)") {
		t.Errorf("armed: %q %v, want the interlock's refusal", out, err)
	}
	out, err = call("far", "--taint", "untrusted", "--trust-host", "other.example")
	if !errors.As(err, &te) || !strings.Contains(out, "web_fetch would reach 127.0.0.1, a host named only by untrusted content") {
		t.Errorf("untrusted, the host not trusted: %q %v, want the interlock's refusal", out, err)
	}
	if _, err := call("bad", "--taint", "untrusted", "--trust-host", "http://127.0.0.1/"); !errors.As(err, new(*cmdkit.UsageError)) {
		t.Errorf("--trust-host with a URL: %v, want a usage error", err)
	}
	for _, ctl := range [][]string{{"--taint", "private"}, {"--taint", "untrusted", "--trust-host", "127.0.0.1"}, {"--taint", "private,untrusted", "--trifecta", "off"}, nil} {
		if out, err := call("sent", ctl...); err != nil {
			t.Errorf("%q: %q %v", ctl, out, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, " ") != "d=sent d=sent d=sent d=sent" {
		t.Errorf("the server received %q, want the four controls only", got)
	}
}
