//go:build unix

package builtin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/testkit/proctest"
)

func TestShell(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		opts    Options
		input   string
		want    string
		wantErr bool
	}{
		{name: "output", input: `{"command":"echo hi"}`, want: "hi\n"},
		{name: "stderr combined", input: `{"command":"echo out; echo err >&2; echo out2"}`, want: "out\nerr\nout2\n"},
		{name: "no output", input: `{"command":"true"}`, want: "[no output]"},
		{name: "stdin is empty", input: `{"command":"cat; echo done"}`, want: "done\n"},
		{name: "exit status", input: `{"command":"exit 3"}`, want: "[exit status 3]", wantErr: true},
		{name: "output then exit status", input: `{"command":"echo partial; exit 3"}`, want: "partial\n[exit status 3]", wantErr: true},
		{name: "no final newline", input: `{"command":"printf abc; exit 1"}`, want: "abc\n[exit status 1]", wantErr: true},
		{name: "command not found", input: `{"command":"no-such-command-xyz 2>/dev/null"}`, want: "[exit status 127]", wantErr: true},
		{name: "killed by a signal", input: `{"command":"kill -TERM $$"}`, want: "[killed by signal: terminated]", wantErr: true},
		{name: "environment", opts: Options{Env: []string{"GREETING=hello"}}, input: `{"command":"echo $GREETING"}`, want: "hello\n"},
		{name: "workspace is the working directory", input: `{"command":"cat f.txt"}`, want: "in the workspace\n"},
		{name: "timeout capped", opts: Options{ShellTimeout: 2 * time.Second, MaxShellTimeout: 5 * time.Second}, input: `{"command":"echo hi","timeout_seconds":100}`,
			want: "hi\n[timeout_seconds 100 was capped at the maximum, 5]"},
		{name: "shell missing", opts: Options{Shell: "/no/such/sh"}, input: `{"command":"echo hi"}`,
			want: "the command could not be started: fork/exec /no/such/sh: no such file or directory", wantErr: true},
		{name: "missing command", input: `{}`, want: `invalid input: missing required field "command"`, wantErr: true},
		{name: "blank command", input: `{"command":"  "}`, want: `invalid input: missing required field "command"`, wantErr: true},
		{name: "zero timeout", input: `{"command":"true","timeout_seconds":0}`, want: "invalid input: timeout_seconds must be at least 1, got 0", wantErr: true},
		{name: "fractional timeout", input: `{"command":"true","timeout_seconds":1.5}`, want: `invalid input: field "timeout_seconds" must be an integer, got number 1.5`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws, root := testWorkspace(t)
			writeFiles(t, root, map[string]string{"f.txt": "in the workspace\n"})
			res := run(t, NewShell(ws, tt.opts), tt.input)
			if res.IsError != tt.wantErr || res.Content != tt.want {
				t.Errorf("result = %+v, want IsError=%v %q", res, tt.wantErr, tt.want)
			}
		})
	}
}

func TestShellWorkingDirectoryIsResolvedRoot(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"real/x": ""})
	symlink(t, filepath.Join(dir, "real"), filepath.Join(dir, "link"))
	ws, err := NewWorkspace(filepath.Join(dir, "link"))
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, NewShell(ws, Options{}), `{"command":"pwd -P"}`)
	if want := filepath.Join(dir, "real") + "\n"; res.Content != want {
		t.Errorf("pwd = %q, want %q", res.Content, want)
	}
}

// waitGone waits up to 5s for pid to go away.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !proctest.Gone(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d survived the call", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, path)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func TestShellKillsProcessGroup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		opts     Options
		input    string
		want     string // prefix of the content
		wantErr  bool
		cancel   bool
		deadline time.Duration
	}{
		{
			name:    "timeout kills a waiting child",
			input:   `{"command":"echo started; sleep 30 & echo $! > child.pid; wait","timeout_seconds":1}`,
			want:    "started\n[timed out after 1s; the command and every process it started were killed]",
			wantErr: true,
		},
		{
			name:    "default timeout",
			opts:    Options{ShellTimeout: time.Second},
			input:   `{"command":"trap '' TERM INT HUP; sleep 30 & echo $! > child.pid; wait"}`,
			want:    "[timed out after 1s; the command and every process it started were killed]",
			wantErr: true,
		},
		{
			name:  "background child killed when the shell exits",
			input: `{"command":"sleep 30 & echo $! > child.pid; echo done"}`,
			want:  "done\n",
		},
		{
			name:    "cancelled",
			input:   `{"command":"sleep 30 & echo $! > child.pid; wait"}`,
			cancel:  true,
			want:    "[cancelled; the command and every process it started were killed]",
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws, root := testWorkspace(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel {
				go func() {
					// Cancel once the child is running and its pid is written
					// whole: the redirection creates the file before echo
					// fills it.
					for {
						if b, err := os.ReadFile(filepath.Join(root, "child.pid")); err == nil && strings.HasSuffix(string(b), "\n") {
							break
						}
						time.Sleep(10 * time.Millisecond)
					}
					cancel()
				}()
			}
			// A cancel that did not stop the call would let it finish with
			// no error: the outcome, not the time, shows it.
			res, err := NewShell(ws, tt.opts).Run(ctx, []byte(tt.input))
			if tt.cancel != (err != nil) || (tt.cancel && !errors.Is(err, context.Canceled)) {
				t.Errorf("Run error = %v, want cancellation %v", err, tt.cancel)
			}
			if res.IsError != tt.wantErr || !strings.HasPrefix(res.Content, tt.want) {
				t.Errorf("result = %+v, want IsError=%v %q", res, tt.wantErr, tt.want)
			}
			waitGone(t, readPid(t, filepath.Join(root, "child.pid")))
		})
	}
}

func TestShellEscapedChildDoesNotHangTheCall(t *testing.T) {
	t.Parallel()
	ws, root := testWorkspace(t)
	// setsid puts the child in a new session, out of reach of the group
	// kill; it holds the output pipe open. The call must still return.
	in := `{"command":"setsid sh -c 'echo $$ > child.pid; exec sleep 30' & sleep 0.2; echo done"}`
	res := run(t, NewShell(ws, Options{KillGrace: 100 * time.Millisecond}), in)
	if res.IsError || res.Content != "done\n" {
		t.Errorf("result = %+v", res)
	}
	// The call returned while the escaped child still held the pipe: had
	// it waited for the pipe to close, the child would be gone by now.
	pid := readPid(t, filepath.Join(root, "child.pid"))
	if proctest.Gone(pid) {
		t.Errorf("the escaped child %d had exited before the call returned: the call waited for it", pid)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

func TestShellTruncatesHeadAndTail(t *testing.T) {
	t.Parallel()
	ws, root := testWorkspace(t)
	var big strings.Builder
	for i := 0; big.Len() < 200_000; i++ {
		fmt.Fprintf(&big, "é line %d\n", i)
	}
	writeFiles(t, root, map[string]string{"big.txt": big.String()})
	res := run(t, NewShell(ws, Options{MaxResultBytes: 1001}), `{"command":"cat big.txt; exit 2"}`)
	if !res.IsError || !strings.HasSuffix(res.Content, "\n[exit status 2]") {
		t.Errorf("result does not end with the exit status: ...%q", res.Content[len(res.Content)-50:])
	}
	out := strings.TrimSuffix(res.Content, "[exit status 2]")
	b := newHeadTail(1001)
	_, _ = b.Write([]byte(big.String()))
	if out != b.String() {
		t.Errorf("shell output differs from the head/tail of the stream:\n%q\n%q", out, b.String())
	}
	checkHeadTail(t, big.String(), 1001, b)
}
