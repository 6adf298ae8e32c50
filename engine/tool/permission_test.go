package tool

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// fakeAsker answers with a fixed reply and records what it was asked.
type fakeAsker struct {
	allow bool
	err   error
	asked []Request
}

func (a *fakeAsker) Confirm(ctx context.Context, req Request) (bool, error) {
	a.asked = append(a.asked, req)
	return a.allow, a.err
}

func TestParseMode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    Mode
		wantErr bool
	}{
		{in: "", want: ModeAsk},
		{in: "ask", want: ModeAsk},
		{in: "yes", want: ModeYes},
		{in: "read-only", want: ModeReadOnly},
		{in: "readonly", wantErr: true},
		{in: "YES", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseMode(tt.in)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("ParseMode(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestGate(t *testing.T) {
	t.Parallel()
	read := Capabilities{ReadsWorkspace: true}
	external := Capabilities{External: true} // untrusted, but changes nothing
	write := Capabilities{ModifiesWorkspace: true}
	run := Capabilities{RunsCommands: true}
	net := Capabilities{ReachesNetwork: true, External: true}
	shell := Capabilities{ReadsWorkspace: true, ModifiesWorkspace: true, RunsCommands: true, ReachesNetwork: true, External: true}
	const (
		noAsker = iota
		askerYes
		askerNo
		askerErr
	)
	tests := []struct {
		name    string
		tool    string
		caps    Capabilities
		mode    Mode
		asker   int
		wantRan bool
		wantAsk bool
		wantMsg string // the content of a denied result
		wantErr bool
	}{
		{name: "read runs in ask without asker", tool: "fs_read", caps: read, mode: ModeAsk, asker: noAsker, wantRan: true},
		{name: "read runs in ask without asking", tool: "fs_read", caps: read, mode: ModeAsk, asker: askerNo, wantRan: true},
		{name: "read runs in read-only", tool: "fs_read", caps: read, mode: ModeReadOnly, wantRan: true},
		{name: "read runs in yes", tool: "fs_read", caps: read, mode: ModeYes, wantRan: true},
		{name: "external-only runs in read-only", tool: "mem", caps: external, mode: ModeReadOnly, wantRan: true},
		{name: "nothing declared runs in read-only", tool: "clock", mode: ModeReadOnly, wantRan: true},

		{name: "write runs in yes", tool: "fs_write", caps: write, mode: ModeYes, wantRan: true},
		{name: "write in read-only", tool: "fs_write", caps: write, mode: ModeReadOnly,
			wantMsg: "denied: fs_write modifies the workspace and the run is in read-only mode"},
		{name: "command in read-only", tool: "make", caps: run, mode: ModeReadOnly,
			wantMsg: "denied: make runs commands and the run is in read-only mode"},
		{name: "network in read-only", tool: "fetch", caps: net, mode: ModeReadOnly,
			wantMsg: "denied: fetch reaches the network and the run is in read-only mode"},
		{name: "shell in read-only", tool: "shell", caps: shell, mode: ModeReadOnly,
			wantMsg: "denied: shell runs commands, modifies the workspace and reaches the network, and the run is in read-only mode"},
		{name: "ask allowed", tool: "fs_write", caps: write, mode: ModeAsk, asker: askerYes, wantAsk: true, wantRan: true},
		{name: "ask denied", tool: "fs_write", caps: write, mode: ModeAsk, asker: askerNo, wantAsk: true,
			wantMsg: "denied by the user"},
		{name: "ask without asker", tool: "shell", caps: shell, mode: ModeAsk, asker: noAsker,
			wantMsg: "denied: no terminal to ask for permission (use --yes to allow, or --read-only)"},
		{name: "empty mode is ask", tool: "fs_write", caps: write, mode: "", asker: askerNo, wantAsk: true,
			wantMsg: "denied by the user"},
		{name: "asker error", tool: "fs_write", caps: write, mode: ModeAsk, asker: askerErr, wantAsk: true, wantErr: true},
		{name: "unknown mode fails closed", tool: "fs_write", caps: write, mode: "maybe", asker: askerYes,
			wantMsg: `denied: unknown permission mode "maybe"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			inner := &fakeTool{name: tt.tool, caps: tt.caps}
			var asker Asker
			fa := &fakeAsker{}
			switch tt.asker {
			case askerYes:
				fa.allow = true
				asker = fa
			case askerNo:
				asker = fa
			case askerErr:
				fa.err = errors.New("terminal went away")
				asker = fa
			}
			g := Gate(inner, tt.mode, asker)
			if g.Spec().Name != tt.tool || g.Spec().Description != inner.Spec().Description ||
				string(g.Spec().InputSchema) != string(inner.Spec().InputSchema) {
				t.Errorf("Spec() = %+v, want the inner tool's", g.Spec())
			}
			if g.Capabilities() != tt.caps {
				t.Errorf("Capabilities() = %+v, want %+v", g.Capabilities(), tt.caps)
			}
			input := json.RawMessage(`{"path":"a.txt"}`)
			res, err := g.Run(context.Background(), input)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Run() error = %v, want error %v", err, tt.wantErr)
			}
			if ran := inner.runs > 0; ran != tt.wantRan {
				t.Errorf("inner tool ran = %v, want %v", ran, tt.wantRan)
			}
			if asked := len(fa.asked) > 0; asked != tt.wantAsk {
				t.Errorf("asker asked = %v, want %v", asked, tt.wantAsk)
			}
			if tt.wantAsk {
				req := fa.asked[0]
				if req.Tool != tt.tool || string(req.Input) != string(input) || req.Capabilities != tt.caps {
					t.Errorf("asker got %+v", req)
				}
			}
			switch {
			case tt.wantErr:
			case tt.wantRan:
				if res.IsError || res.Content != "ran "+tt.tool {
					t.Errorf("result = %+v, want the inner tool's", res)
				}
			default:
				if !res.IsError || res.Content != tt.wantMsg {
					t.Errorf("result = %+v, want IsError with %q", res, tt.wantMsg)
				}
			}
		})
	}
}

func TestGateUnwrap(t *testing.T) {
	t.Parallel()
	inner := &fakeTool{name: "x"}
	g := Gate(inner, ModeYes, nil)
	u, ok := g.(interface{ Unwrap() Tool })
	if !ok || u.Unwrap() != inner {
		t.Errorf("gate does not unwrap to the inner tool")
	}
}
