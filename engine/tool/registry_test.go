package tool

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func newTestRegistry(t *testing.T, names ...string) *Registry {
	t.Helper()
	r := &Registry{}
	for _, n := range names {
		if err := r.Register(&fakeTool{name: n}); err != nil {
			t.Fatalf("Register(%q): %v", n, err)
		}
	}
	return r
}

func TestRegistryOrder(t *testing.T) {
	t.Parallel()
	r := newTestRegistry(t, "fs_read", "fs_list", "shell", "fs_write")
	want := []string{"fs_read", "fs_list", "shell", "fs_write"}
	if got := r.Names(); !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	var specNames []string
	for _, s := range r.Specs() {
		specNames = append(specNames, s.Name)
	}
	if !slices.Equal(specNames, want) {
		t.Errorf("Specs() names = %v, want %v", specNames, want)
	}
	var recorded []string
	for _, s := range r.TranscriptSpecs() {
		recorded = append(recorded, s.Name+": "+s.Description+" "+string(s.InputSchema))
	}
	if want := []string{"fs_read: fake fs_read {\"type\":\"object\"}", "fs_list: fake fs_list {\"type\":\"object\"}",
		"shell: fake shell {\"type\":\"object\"}", "fs_write: fake fs_write {\"type\":\"object\"}"}; !slices.Equal(recorded, want) {
		t.Errorf("TranscriptSpecs() = %q, want %q", recorded, want)
	}
	if got := len(r.Tools()); got != 4 || r.Len() != 4 {
		t.Errorf("Tools() has %d, Len() = %d; want 4", got, r.Len())
	}
	tl, ok := r.Get("shell")
	if !ok || tl.Spec().Name != "shell" {
		t.Errorf("Get(shell) = %v, %v", tl, ok)
	}
	if _, ok := r.Get("nope"); ok {
		t.Error("Get(nope) found a tool")
	}
}

func TestRegistryZeroValue(t *testing.T) {
	t.Parallel()
	var r Registry
	if _, ok := r.Get("x"); ok {
		t.Error("zero registry found a tool")
	}
	if specs := r.TranscriptSpecs(); specs == nil || len(specs) != 0 {
		t.Errorf("zero registry's TranscriptSpecs() = %#v, want empty and not nil", specs)
	}
	if len(r.Names()) != 0 || len(r.Specs()) != 0 {
		t.Error("zero registry is not empty")
	}
	if _, err := r.Restrict(nil); err != nil {
		t.Errorf("Restrict(nil) on zero registry: %v", err)
	}
}

func TestRegistryRegisterErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		tool    Tool
		wantErr string
		dup     bool
	}{
		{name: "duplicate", tool: &fakeTool{name: "a"}, wantErr: `tool: register "a": duplicate tool`, dup: true},
		{name: "nil", tool: nil, wantErr: "tool: register: nil tool"},
		{name: "empty name", tool: &fakeTool{name: ""}, wantErr: "tool: register: tool has an empty name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newTestRegistry(t, "a", "b")
			err := r.Register(tt.tool)
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("Register() error = %v, want %q", err, tt.wantErr)
			}
			if errors.Is(err, ErrDuplicateTool) != tt.dup {
				t.Errorf("errors.Is(err, ErrDuplicateTool) = %v, want %v", !tt.dup, tt.dup)
			}
			if got := r.Names(); !slices.Equal(got, []string{"a", "b"}) {
				t.Errorf("a failed Register changed the registry: %v", got)
			}
		})
	}
}

func TestNewRegistry(t *testing.T) {
	t.Parallel()
	r, err := NewRegistry(&fakeTool{name: "x"}, &fakeTool{name: "y"})
	if err != nil || !slices.Equal(r.Names(), []string{"x", "y"}) {
		t.Fatalf("NewRegistry = %v, %v", r, err)
	}
	if _, err := NewRegistry(&fakeTool{name: "x"}, &fakeTool{name: "x"}); !errors.Is(err, ErrDuplicateTool) {
		t.Errorf("NewRegistry with a duplicate: err = %v", err)
	}
}

func TestRegistryRestrict(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		names   []string
		want    []string
		wantErr string
	}{
		{name: "registry order wins", names: []string{"shell", "fs_read"}, want: []string{"fs_read", "shell"}},
		{name: "all", names: []string{"fs_read", "fs_list", "fs_write", "shell"}, want: []string{"fs_read", "fs_list", "fs_write", "shell"}},
		{name: "duplicates count once", names: []string{"fs_list", "fs_list"}, want: []string{"fs_list"}},
		{name: "empty", names: nil, want: []string{}},
		{
			name:    "one unknown",
			names:   []string{"fs_read", "web_fetch"},
			wantErr: `tool: unknown tool "web_fetch" (available: fs_read, fs_list, fs_write, shell)`,
		},
		{
			name:    "several unknown",
			names:   []string{"bash", "fs_read", "grep", "bash"},
			wantErr: `tool: unknown tool "bash", "grep" (available: fs_read, fs_list, fs_write, shell)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newTestRegistry(t, "fs_read", "fs_list", "fs_write", "shell")
			got, err := r.Restrict(tt.names)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Restrict() error = %v, want %q", err, tt.wantErr)
				}
				if !errors.Is(err, ErrUnknownTool) {
					t.Errorf("error does not wrap ErrUnknownTool")
				}
				return
			}
			if err != nil {
				t.Fatalf("Restrict(): %v", err)
			}
			if !slices.Equal(got.Names(), tt.want) {
				t.Errorf("Restrict() names = %v, want %v", got.Names(), tt.want)
			}
			for _, n := range tt.want {
				a, _ := r.Get(n)
				b, _ := got.Get(n)
				if a != b {
					t.Errorf("Restrict() holds a different tool for %q", n)
				}
			}
			if r.Len() != 4 {
				t.Errorf("Restrict changed the original registry: %v", r.Names())
			}
		})
	}
}

func TestRegistryRestrictedIsIndependent(t *testing.T) {
	t.Parallel()
	r := newTestRegistry(t, "a", "b")
	sub, err := r.Restrict([]string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.Register(&fakeTool{name: "c"}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(r.Names(), ",") != "a,b" || strings.Join(sub.Names(), ",") != "a,c" {
		t.Errorf("registries share state: %v %v", r.Names(), sub.Names())
	}
}
