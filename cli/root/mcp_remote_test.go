package root_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serving starts mecha with args in env and returns the URL it prints and
// the lines of its stderr, each as it comes (the URL's included).
func serving(t *testing.T, env []string, args ...string) (string, <-chan string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command("mecha", args...)
	cmd.Env = env
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("mecha ended before it printed its URL")
			}
			if u, ok := strings.CutPrefix(l, "mecha: MCP over streamable HTTP at "); ok {
				return u, lines, cmd
			}
		case <-time.After(20 * time.Second):
			t.Fatal("no URL printed")
		}
	}
}

// lineWith waits for the next line of lines holding s, and returns it.
func lineWith(t *testing.T, lines <-chan string, s string) string {
	t.Helper()
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("no line holding %q", s)
			}
			if strings.Contains(l, s) {
				return l
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("no line holding %q", s)
		}
	}
}

// bearer adds a bearer token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// initialize posts an MCP initialize request with auth (none when "")
// and returns the status and WWW-Authenticate header of the answer.
func initialize(t *testing.T, url, auth string) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate")
}

// TestMCPServeHTTPRemote: --allow-remote requires a bearer token on every
// request. The server listens on 127.0.0.1 with --allow-remote (no test
// binds an address other machines reach; the address check itself is
// cli/mcpcmd's TestListenRemote): without the token, or with another,
// 401 with WWW-Authenticate and no call runs; with it, the client works.
func TestMCPServeHTTPRemote(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		args  []string
		env   []string
		given string // the token given, "" for a generated one
	}{
		{name: "generated", args: []string{"--allow-remote"}},
		{name: "--token-file", args: []string{"--allow-remote", "--token-file", "TOKENFILE"}, given: "from-a-file_0123456789abcdef"},
		{name: "MECHA_MCP_TOKEN", args: []string{"--allow-remote"}, env: []string{"MECHA_MCP_TOKEN=from-the-env_0123456789abcdef"}, given: "from-the-env_0123456789abcdef"},
		{name: "given on loopback", env: []string{"MECHA_MCP_TOKEN=from-the-env_0123456789abcdef"}, given: "from-the-env_0123456789abcdef"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir, ws := t.TempDir(), t.TempDir()
			os.WriteFile(filepath.Join(ws, "a.txt"), []byte("private"), 0o600)
			tokenFile := filepath.Join(dir, "token")
			os.WriteFile(tokenFile, []byte(c.given+"\n"), 0o600)
			args := []string{"mcp", "serve", "-w", ws, "--http", "127.0.0.1:0"}
			for _, a := range c.args {
				args = append(args, strings.ReplaceAll(a, "TOKENFILE", tokenFile))
			}
			url, lines, cmd := serving(t, append(mechaEnv(dir), c.env...), args...)
			token := c.given
			if token == "" {
				l := lineWith(t, lines, "bearer token (shown once")
				token = l[strings.LastIndex(l, " ")+1:]
				if len(token) != 43 {
					t.Fatalf("token %q", token)
				}
			} else {
				lineWith(t, lines, "requests need the bearer token given")
			}
			for auth, want := range map[string]string{
				"":                         `Bearer realm="mecha"`,
				"Bearer not-the-token-123": `Bearer realm="mecha", error="invalid_token"`,
				"Basic " + token:           `Bearer realm="mecha"`,
			} {
				if status, www := initialize(t, url, auth); status != http.StatusUnauthorized || www != want {
					t.Errorf("%q: %d %q, want 401 %q", auth, status, www, want)
				}
			}
			if status, _ := initialize(t, url, "Bearer "+token); status != http.StatusOK {
				t.Errorf("with the token: %d", status)
			}
			// An SDK client with the token works; one without cannot even
			// connect.
			c := mcp.NewClient(&mcp.Implementation{Name: "no-token", Version: "0"}, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil); err == nil {
				cs.Close()
				t.Error("a client without the token connected")
			}
			cs := connect(t, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token}}})
			if r := call(t, cs, "fs_read", map[string]any{"path": "a.txt"}); r.IsError || !strings.Contains(resultText(r), "private") {
				t.Fatalf("fs_read with the token: %q", resultText(r))
			}
			cs.Close()
			stop(t, cmd)
			// Only the call made with the token was recorded, and the token
			// is in no session file.
			if calls := toolCalls(onlySession(t, dir)); len(calls) != 1 || calls[0].Tool != "fs_read" {
				t.Errorf("calls %+v", calls)
			}
			files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
			for _, f := range files {
				if b, _ := os.ReadFile(f); bytes.Contains(b, []byte(token)) {
					t.Errorf("%s holds the token", f)
				}
			}
		})
	}
}

// TestMCPServeRemoteRefused: an address other machines could reach is
// refused at start without --allow-remote: exit 2, one line, nothing
// served. 192.0.2.1 (TEST-NET-1) is on no interface here, so even a broken
// check could not listen on it.
func TestMCPServeRemoteRefused(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"mcp", "serve", "--http", "192.0.2.1:0"},
		{"mcp", "proxy", "--http", "192.0.2.1:0", "--", "mcpupstream"},
	} {
		cmd := exec.Command("mecha", args...)
		cmd.Env = mechaEnv(t.TempDir())
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 2 {
			t.Errorf("%v: %v, want exit 2", args, err)
		}
		want := "mecha: --http 192.0.2.1:0: other machines could reach it; give --allow-remote to serve them (a bearer token is then required), or listen on 127.0.0.1\n"
		if stderr.String() != want {
			t.Errorf("%v: stderr %q, want %q", args, stderr.String(), want)
		}
	}
}
