package harness

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mecha-agent/mecha/engine/sandbox"
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/mcp/mcpclient"
	"github.com/mecha-agent/mecha/record/transcript"
)

// surfaceWorld is a World with a home of its own and a kernel that
// enforces no sandbox (Err collects the notes).
func surfaceWorld(t *testing.T, errw *bytes.Buffer) *World {
	home := t.TempDir()
	return &World{Getenv: func(k string) string {
		if k == "MECHA_HOME" {
			return home
		}
		return ""
	}, SandboxSupport: func() sandbox.Support { return sandbox.Support{} }, Err: errw, Version: "v9"}
}

// TestOpenSurfaceDefaults: the zero spec is a new run's surface, and its
// Config is what a config record keeps of it.
func TestOpenSurfaceDefaults(t *testing.T) {
	t.Parallel()
	var errw bytes.Buffer
	w := surfaceWorld(t, &errw)
	dir := t.TempDir()
	s, err := OpenSurface(context.Background(), w, SurfaceSpec{Workspace: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rc := s.Config()
	want, _ := w.Sandbox(sandbox.ModeLandlock, false, false)
	if rc.Workspace != dir || rc.PermissionMode != "ask" || rc.Trifecta != "refuse" || rc.MechaVersion != "v9" ||
		rc.Sandbox != want.Mode || rc.SandboxNetwork != want.Network {
		t.Errorf("config: workspace %q, permission %q, trifecta %q, version %q, sandbox %q network %v",
			rc.Workspace, rc.PermissionMode, rc.Trifecta, rc.MechaVersion, rc.Sandbox, rc.SandboxNetwork)
	}
	if !strings.Contains(errw.String(), "mecha: ") {
		t.Errorf("no note of the sandbox the kernel does not enforce: %q", errw.String())
	}
	var builtins []string
	for _, d := range BuiltinTools() {
		builtins = append(builtins, d.Name)
	}
	if !slices.Equal(rc.Tools, builtins) || !slices.Equal(s.Registry().Names(), builtins) || len(rc.ToolSpecs) != len(builtins) {
		t.Errorf("tools %v (specs %d), want the built-ins %v", rc.Tools, len(rc.ToolSpecs), builtins)
	}
	if !s.Tracker().Taint().Clean() {
		t.Errorf("a new surface starts %+v", s.Tracker().Taint())
	}
	only, err := OpenSurface(context.Background(), w, SurfaceSpec{Workspace: dir, Yes: true, Trifecta: "off", Tools: []string{"fs_read"}})
	if err != nil {
		t.Fatal(err)
	}
	defer only.Close()
	if rc := only.Config(); rc.PermissionMode != "yes" || rc.Trifecta != "off" || !slices.Equal(rc.Tools, []string{"fs_read"}) {
		t.Errorf("config: permission %q, trifecta %q, tools %v", rc.PermissionMode, rc.Trifecta, rc.Tools)
	}
}

func TestSurfaceSpecRefused(t *testing.T) {
	t.Parallel()
	for _, spec := range []SurfaceSpec{
		{Yes: true, ReadOnly: true},
		{Trifecta: "maybe"},
		{Sandbox: Sandbox{Mode: "chroot"}},
	} {
		var u *UsageError
		if err := spec.Validate(); !errors.As(err, &u) {
			t.Errorf("%+v: %v, want a usage error", spec, err)
		}
		if _, err := OpenSurface(context.Background(), &World{}, spec); !errors.As(err, &u) {
			t.Errorf("%+v opened: %v", spec, err)
		}
	}
}

// TestOpenSurfaceStartsFromTaint: a surface opened on an armed
// conversation refuses a call that could send data out, for the reason
// given, and nothing reaches the server; the control, a clean surface,
// makes the request.
func TestOpenSurfaceStartsFromTaint(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	defer srv.Close()
	input := []byte(`{"url":"` + srv.URL + `/x?d=secret"}`)
	fetch := func(taint transcript.Taint) tool.Result {
		t.Helper()
		var errw bytes.Buffer
		s, err := OpenSurface(context.Background(), surfaceWorld(t, &errw), SurfaceSpec{Workspace: t.TempDir(), Yes: true,
			MCP: MCP{Off: true}, Taint: taint, TaintWhy: "the recorded session"})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		fetch, _ := s.Registry().Get("web_fetch")
		res, err := fetch.Run(context.Background(), input)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := fetch(transcript.Taint{Private: true, Untrusted: true})
	if !res.IsError || !strings.HasPrefix(res.Content, tool.RefusalPrefix) || !strings.Contains(res.Content, "(the recorded session)") {
		t.Errorf("armed: %+v", res)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the armed surface made %d requests", n)
	}
	if res := fetch(transcript.Taint{}); res.IsError || hits.Load() != 1 {
		t.Errorf("clean: %+v, %d requests", res, hits.Load())
	}
}

// TestOpenSurfaceFor: a surface opened for one tool starts only the MCP
// server its name can belong to, quietly, and says why it is missing; one
// opened for any tool starts every server and says so on Err.
func TestOpenSurfaceFor(t *testing.T) {
	t.Parallel()
	servers := []mcpclient.ServerConfig{
		{Name: "a", Transport: mcpclient.TransportStdio, Command: "/nonexistent/mcp-a", Source: "test"},
		{Name: "b", Transport: mcpclient.TransportStdio, Command: "/nonexistent/mcp-b", Source: "test"},
	}
	var errw bytes.Buffer
	s, err := OpenSurface(context.Background(), surfaceWorld(t, &errw), SurfaceSpec{Workspace: t.TempDir(),
		MCP: MCP{Off: true}, Servers: servers, For: "mcp__a__echo"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := len(s.mcp.Servers()); got != 1 || s.mcp.Servers()[0].Config().Name != "a" {
		t.Errorf("started %d servers, want a alone", got)
	}
	if err := s.MissingServer("mcp__a__echo"); err == nil || !strings.Contains(err.Error(), `server "a", which would offer mcp__a__echo, did not start`) {
		t.Errorf("missing: %v", err)
	}
	if err := s.MissingServer("fs_read"); err != nil {
		t.Errorf("fs_read: %v", err)
	}
	if strings.Contains(errw.String(), "mcp:") {
		t.Errorf("a surface for one tool wrote %q", errw.String())
	}
	errw.Reset()
	all, err := OpenSurface(context.Background(), surfaceWorld(t, &errw), SurfaceSpec{Workspace: t.TempDir(),
		MCP: MCP{Off: true}, Servers: servers})
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	if n := strings.Count(errw.String(), "did not start"); n != 2 {
		t.Errorf("%d servers said they did not start: %q", n, errw.String())
	}
}
