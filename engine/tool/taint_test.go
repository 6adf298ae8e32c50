package tool

import (
	"context"
	"testing"

	"github.com/mecha-agent/mecha/record/transcript"
)

func TestTaintOf(t *testing.T) {
	t.Parallel()
	read := Capabilities{ReadsWorkspace: true}
	write := Capabilities{ModifiesWorkspace: true}
	fetch := Capabilities{ReachesNetwork: true, External: true}
	shell := Capabilities{ReadsWorkspace: true, ModifiesWorkspace: true, RunsCommands: true, ReachesNetwork: true, External: true}
	tests := []struct {
		name string
		caps []Capabilities
		want transcript.Taint
	}{
		{name: "nothing ran", caps: nil, want: transcript.Taint{}},
		{name: "write only", caps: []Capabilities{write, write}, want: transcript.Taint{}},
		{name: "network without external", caps: []Capabilities{{ReachesNetwork: true}}, want: transcript.Taint{}},
		{name: "read", caps: []Capabilities{write, read}, want: transcript.Taint{Private: true}},
		{name: "external", caps: []Capabilities{fetch}, want: transcript.Taint{Untrusted: true}},
		{name: "read then external", caps: []Capabilities{read, write, fetch}, want: transcript.Taint{Private: true, Untrusted: true}},
		{name: "shell", caps: []Capabilities{shell}, want: transcript.Taint{Private: true, Untrusted: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := TaintOf(tt.caps...); got != tt.want {
				t.Errorf("TaintOf() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestTrackerCountsOnlyCallsThatRan(t *testing.T) {
	t.Parallel()
	var tr Tracker
	read := tr.Wrap(&fakeTool{name: "fs_read", caps: Capabilities{ReadsWorkspace: true}})
	fetch := tr.Wrap(&fakeTool{name: "fetch", caps: Capabilities{ReachesNetwork: true, External: true}})
	if !tr.Taint().Clean() {
		t.Fatal("a new tracker is tainted")
	}
	// Denied in read-only mode: fetch never runs, so it does not count.
	if res, err := Gate(fetch, ModeReadOnly, nil).Run(context.Background(), nil); err != nil || !res.IsError {
		t.Fatalf("fetch was not denied: %+v %v", res, err)
	}
	if !tr.Taint().Clean() {
		t.Errorf("a denied call tainted the run: %+v", tr.Taint())
	}
	if _, err := Gate(read, ModeReadOnly, nil).Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if got, want := tr.Taint(), (transcript.Taint{Private: true}); got != want {
		t.Errorf("Taint() = %+v, want %+v", got, want)
	}
	if _, err := Gate(fetch, ModeYes, nil).Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if got, want := tr.Taint(), (transcript.Taint{Private: true, Untrusted: true}); got != want {
		t.Errorf("Taint() = %+v, want %+v", got, want)
	}
	if read.Spec().Name != "fs_read" || !read.Capabilities().ReadsWorkspace {
		t.Errorf("Wrap does not preserve Spec and Capabilities")
	}
}

// TestTaintNames: every taint named and parsed back; unknown words refused.
func TestTaintNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		taint transcript.Taint
		names string
	}{
		{transcript.Taint{}, "clean"},
		{transcript.Taint{Private: true}, "private"},
		{transcript.Taint{Untrusted: true}, "untrusted"},
		{transcript.Taint{Private: true, Untrusted: true}, "private,untrusted"},
	} {
		if got := TaintNames(tc.taint); got != tc.names {
			t.Errorf("TaintNames(%+v) = %q, want %q", tc.taint, got, tc.names)
		}
		if got, err := ParseTaint(tc.names); err != nil || got != tc.taint {
			t.Errorf("ParseTaint(%q) = %+v, %v", tc.names, got, err)
		}
	}
	if got, err := ParseTaint(" untrusted , private"); err != nil || !got.Private || !got.Untrusted {
		t.Errorf("ParseTaint in another order: %+v, %v", got, err)
	}
	for _, bad := range []string{"", "armed", "private,", "secret"} {
		if _, err := ParseTaint(bad); err == nil {
			t.Errorf("ParseTaint(%q) accepted", bad)
		}
	}
}
