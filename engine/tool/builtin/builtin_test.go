package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/engine/tool"
)

func TestAll(t *testing.T) {
	t.Parallel()
	ws, _ := testWorkspace(t)
	tools := All(ws, Options{})
	want := []struct {
		name string
		caps tool.Capabilities
	}{
		{NameFSRead, tool.Capabilities{ReadsWorkspace: true}},
		{NameFSList, tool.Capabilities{ReadsWorkspace: true}},
		{NameFSWrite, tool.Capabilities{ModifiesWorkspace: true}},
		{NameFSEdit, tool.Capabilities{ReadsWorkspace: true, ModifiesWorkspace: true}},
		{NameFSGrep, tool.Capabilities{ReadsWorkspace: true}},
		{NameFSGlob, tool.Capabilities{ReadsWorkspace: true}},
		{NameShell, tool.Capabilities{ReadsWorkspace: true, ModifiesWorkspace: true, RunsCommands: true, ReachesNetwork: true, ActsOutward: true, External: true}},
		{NameWebFetch, tool.Capabilities{ReachesNetwork: true, External: true}},
	}
	if len(tools) != len(want) {
		t.Fatalf("All returned %d tools, want %d", len(tools), len(want))
	}
	for i, w := range want {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			tl := tools[i]
			spec := tl.Spec()
			if spec.Name != w.name {
				t.Errorf("tool %d is %q, want %q", i, spec.Name, w.name)
			}
			if tl.Capabilities() != w.caps {
				t.Errorf("Capabilities() = %+v, want %+v", tl.Capabilities(), w.caps)
			}
			if strings.TrimSpace(spec.Description) == "" || strings.Contains(spec.Description, "%!") {
				t.Errorf("bad description %q", spec.Description)
			}
			var schema struct {
				Type                 string                     `json:"type"`
				Properties           map[string]json.RawMessage `json:"properties"`
				Required             []string                   `json:"required"`
				AdditionalProperties *bool                      `json:"additionalProperties"`
			}
			if err := json.Unmarshal(spec.InputSchema, &schema); err != nil {
				t.Fatalf("schema is not JSON: %v", err)
			}
			if schema.Type != "object" || schema.AdditionalProperties == nil || *schema.AdditionalProperties {
				t.Errorf("schema must be a closed object: %s", spec.InputSchema)
			}
			for _, r := range schema.Required {
				if _, ok := schema.Properties[r]; !ok {
					t.Errorf("required %q is not a property", r)
				}
			}
		})
	}
	reg, err := tool.NewRegistry(tools...)
	if err != nil {
		t.Fatal(err)
	}
	if got := reg.Names(); !slices.Equal(got, []string{"fs_read", "fs_list", "fs_write", "fs_edit", "fs_grep", "fs_glob", "shell", "web_fetch"}) {
		t.Errorf("registry order = %v", got)
	}
}

func TestShellDescriptionShowsTimeouts(t *testing.T) {
	t.Parallel()
	ws, _ := testWorkspace(t)
	d := NewShell(ws, Options{}).Spec().Description
	if !strings.Contains(d, "(default 120, at most 600)") {
		t.Errorf("description does not show the timeouts: %q", d)
	}
}

// TestMalformedInput sends the same bad inputs to every tool.
func TestMalformedInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, input, want string
	}{
		{"malformed", `{"path":`, "invalid input: truncated JSON"},
		{"syntax", `{"path" "a"}`, "invalid input: malformed JSON at byte"},
		{"null", `null`, "invalid input: want a JSON object, got null"},
		{"array", `["a"]`, "invalid input: want a JSON object, got array"},
		{"string", `"a"`, "invalid input: want a JSON object, got string"},
		{"trailing", `{"path":"a"} {}`, "invalid input: trailing data after the JSON object"},
		{"unknown field", `{"path":"a","bogus":1}`, `invalid input: unknown field "bogus" (accepted fields: `},
		{"path type", `{"path":7}`, `invalid input: field "path" must be a string, got number`},
	}
	ws, _ := testWorkspace(t)
	for _, tl := range All(ws, Options{}) {
		for _, tt := range tests {
			name := tl.Spec().Name
			field := map[string]string{NameShell: "command", NameWebFetch: "url"}[name]
			if field == "" {
				field = "path"
			}
			input := strings.ReplaceAll(tt.input, `"path"`, `"`+field+`"`)
			want := strings.ReplaceAll(tt.want, `"path"`, `"`+field+`"`)
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				res := run(t, tl, input)
				if !res.IsError || !strings.HasPrefix(res.Content, want) {
					t.Errorf("result = %+v, want an error starting %q", res, want)
				}
			})
		}
	}
}

func TestOptionsDefaults(t *testing.T) {
	t.Parallel()
	o := Options{}.withDefaults()
	if o.MaxResultBytes != 64<<10 || o.ShellTimeout != DefaultShellTimeout || o.MaxShellTimeout != DefaultMaxShellTimeout || o.Shell != "/bin/sh" {
		t.Errorf("defaults = %+v", o)
	}
	o = Options{ShellTimeout: 2 * DefaultMaxShellTimeout}.withDefaults()
	if o.MaxShellTimeout != o.ShellTimeout {
		t.Errorf("MaxShellTimeout %v is below ShellTimeout %v", o.MaxShellTimeout, o.ShellTimeout)
	}
}

func TestCancelledContextIsAHarnessError(t *testing.T) {
	t.Parallel()
	ws, root := testWorkspace(t)
	writeFiles(t, root, map[string]string{"a.txt": "alpha\n"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	inputs := map[string]string{
		NameFSRead:   `{"path":"a.txt"}`,
		NameFSList:   `{}`,
		NameFSWrite:  `{"path":"b.txt","content":"x"}`,
		NameFSEdit:   `{"path":"a.txt","old_string":"alpha","new_string":"beta"}`,
		NameFSGrep:   `{"pattern":"alpha"}`,
		NameFSGlob:   `{"pattern":"*"}`,
		NameShell:    `{"command":"touch c.txt"}`,
		NameWebFetch: `{"url":"http://127.0.0.1:1/"}`,
	}
	for _, tl := range All(ws, Options{}) {
		name := tl.Spec().Name
		t.Run(name, func(t *testing.T) {
			_, err := tl.Run(ctx, []byte(inputs[name]))
			if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "builtin: "+name+": ") {
				t.Errorf("Run error = %v, want a wrapped context.Canceled", err)
			}
		})
	}
	if got := readFile(t, filepath.Join(root, "a.txt")); got != "alpha\n" {
		t.Errorf("a.txt changed to %q", got)
	}
	for _, name := range []string{"b.txt", "c.txt"} {
		if _, err := os.Stat(filepath.Join(root, name)); err == nil {
			t.Errorf("%s was created by a cancelled call", name)
		}
	}
}
