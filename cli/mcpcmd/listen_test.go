package mcpcmd

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/testkit/cmdtest"
)

func TestListenAddr(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"8080": "127.0.0.1:8080", ":8080": "127.0.0.1:8080", "0.0.0.0:1": "0.0.0.0:1", "[::1]:0": "[::1]:0"} {
		if got, err := listenAddr(in); err != nil || got != want {
			t.Errorf("listenAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestListenRemote: the address check, on parsed addresses only (nothing
// is bound): what other machines could reach needs --allow-remote;
// loopback does not.
func TestListenRemote(t *testing.T) {
	t.Parallel()
	loopback := []string{"8080", ":8080", "127.0.0.1:1", "127.9.9.9:1", "[::1]:1", "localhost:1", "LocalHost:1", "[::ffff:127.0.0.1]:1"}
	remote := []string{"0.0.0.0:1", "[::]:1", "[::ffff:0.0.0.0]:1", "192.168.1.5:1", "10.0.0.1:1", "100.64.0.1:1", "203.0.113.7:1",
		"[2001:db8::1]:1", "[fe80::1%eth0]:1", "[fd00::1]:1", "example.com:1", "localhost.example.com:1", "127.1:1", "0:1", "[::ffff:10.0.0.1]:1"}
	for _, addr := range loopback {
		if err := (&Listen{Addr: addr}).Validate(); err != nil {
			t.Errorf("%s: %v, want it served", addr, err)
		}
	}
	for _, addr := range remote {
		err := (&Listen{Addr: addr}).Validate()
		var ue *cmdkit.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "give --allow-remote") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line of usage error", addr, err)
		}
		if err := (&Listen{Addr: addr, AllowRemote: true}).Validate(); err != nil {
			t.Errorf("%s with --allow-remote: %v", addr, err)
		}
	}
	for _, l := range []Listen{{AllowRemote: true}, {TokenFile: "f"}} {
		if err := l.Validate(); err == nil || !strings.Contains(err.Error(), "go with --http") {
			t.Errorf("%+v without --http: %v", l, err)
		}
	}
	if err := (&Listen{Addr: "[::1"}).Validate(); err == nil {
		t.Error("a malformed address is served")
	}
}

// TestListenBound: the address a listener got is checked again, whatever
// its name resolved to.
func TestListenBound(t *testing.T) {
	t.Parallel()
	l := &Listen{Addr: "localhost:0"}
	if err := l.bound(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}); err != nil {
		t.Error(err)
	}
	if err := l.bound(&net.TCPAddr{IP: net.ParseIP("192.0.2.1")}); err == nil || !strings.Contains(err.Error(), "other machines could reach") {
		t.Errorf("a name resolving elsewhere: %v", err)
	}
	l.AllowRemote = true
	if err := l.bound(&net.TCPAddr{IP: net.ParseIP("192.0.2.1")}); err != nil {
		t.Errorf("with --allow-remote: %v", err)
	}
}

func TestServeRemoteFlags(t *testing.T) {
	t.Parallel()
	var got *ServeOptions
	run := func(_ context.Context, o *ServeOptions) error { got = o; return nil }
	var ue *cmdkit.UsageError
	if err := cmdtest.Execute(NewCmdServe(&cmdkit.Env{}, run), "--http", "0.0.0.0:8080"); !errors.As(err, &ue) {
		t.Fatalf("0.0.0.0 without --allow-remote: %v", err)
	}
	if err := cmdtest.Execute(NewCmdProxy(&cmdkit.Env{}, nil), "--http", "[::]:8080", "--", "srv"); !errors.As(err, &ue) {
		t.Fatalf("proxy on [::] without --allow-remote: %v", err)
	}
	if err := cmdtest.Execute(NewCmdServe(&cmdkit.Env{}, run), "--http", "0.0.0.0:8080", "--allow-remote", "--token-file", "t"); err != nil ||
		!got.HTTP.AllowRemote || got.HTTP.TokenFile != "t" {
		t.Fatalf("with --allow-remote: %v %+v", err, got)
	}
}

func TestListenToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := func(s string) string {
		p := filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(s)+".tok")
		os.WriteFile(p, []byte(s), 0o600)
		return p
	}
	good := "s3cret-token_0123456789"
	env := func(v string) *cmdkit.Env {
		return &cmdkit.Env{Vars: func(k string) string {
			if k == TokenVar {
				return v
			}
			return ""
		}}
	}
	fixed := bytes.NewReader(bytes.Repeat([]byte{0xAB}, 32))
	for _, c := range []struct {
		name      string
		l         Listen
		env       string
		want      string
		generated bool
		err       string
	}{
		{name: "loopback, none given: no token", l: Listen{Addr: "8080"}},
		{name: "remote: generated", l: Listen{Addr: "0.0.0.0:1", AllowRemote: true, Rand: fixed}, want: strings.Repeat("q6ur", 10) + "q6s", generated: true},
		{name: "from a file, newline trimmed", l: Listen{Addr: "0.0.0.0:1", AllowRemote: true, TokenFile: file(good + "\n")}, want: good},
		{name: "from the environment", l: Listen{Addr: "0.0.0.0:1", AllowRemote: true}, env: good, want: good},
		{name: "the file wins", l: Listen{Addr: "8080", TokenFile: file(good + "\n")}, env: "other-token-0123456789", want: good},
		{name: "given on loopback: required", l: Listen{Addr: "8080"}, env: good, want: good},
		{name: "too short", l: Listen{Addr: "8080", TokenFile: file("short")}, err: "at least 16 characters"},
		{name: "not a bearer token", l: Listen{Addr: "8080"}, env: "has spaces in it, 0123456789", err: "of $MECHA_MCP_TOKEN must be"},
		{name: "no such file", l: Listen{Addr: "8080", TokenFile: filepath.Join(dir, "none")}, err: "--token-file"},
	} {
		got, generated, err := c.l.token(env(c.env))
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %q, %v; want an error about %q", c.name, got, err, c.err)
			}
		case err != nil || got != c.want || generated != c.generated:
			t.Errorf("%s: %q generated=%v, %v; want %q", c.name, got, generated, err, c.want)
		}
	}
}

// TestRequireToken: a request without the token, or with another, gets
// 401 and a WWW-Authenticate header and never reaches the server; with it
// (the scheme in any case) it does.
func TestRequireToken(t *testing.T) {
	t.Parallel()
	const token = "s3cret-token_0123456789"
	reached := 0
	srv := httptest.NewServer(requireToken(token, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached++
		io.WriteString(w, "ok")
	})))
	defer srv.Close()
	for _, c := range []struct {
		auth, www string
		status    int
	}{
		{"", `Bearer realm="mecha"`, 401},
		{"Basic dXNlcjpwYXNz", `Bearer realm="mecha"`, 401},
		{"Bearer", `Bearer realm="mecha"`, 401},
		{"Bearer wrong-token-0123456789", `Bearer realm="mecha", error="invalid_token"`, 401},
		{"Bearer " + token[:len(token)-1], `Bearer realm="mecha", error="invalid_token"`, 401},
		{"Bearer " + token + "x", `Bearer realm="mecha", error="invalid_token"`, 401},
		{"Bearer " + token, "", 200},
		{"bearer " + token, "", 200},
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(`{}`))
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status || resp.Header.Get("WWW-Authenticate") != c.www {
			t.Errorf("%q: %d %q, want %d %q", c.auth, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), c.status, c.www)
		}
	}
	if reached != 2 {
		t.Errorf("the server was reached %d times, want 2", reached)
	}
}
