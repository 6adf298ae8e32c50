package importrules

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestModule holds the module this test is built in to Rules.
func TestModule(t *testing.T) {
	t.Parallel()
	module, g := loadGraph(t)
	for _, name := range Unmatched(module, g, Rules) {
		t.Errorf("rule %q constrains no package of %s: a renamed package?", name, module)
	}
	for _, v := range Check(module, g, Rules) {
		t.Error(v)
	}
	for _, p := range Layered(module, g, Layers, TestKits) {
		t.Errorf("package %s is in no layer of importrules.Layers and is no test kit", p)
	}
}

// loadGraph lists the module's packages and all their dependencies, the
// standard library included, from the module root.
func loadGraph(t *testing.T) (module string, g Graph) {
	t.Helper()
	mod := goCmd(t, "list", "-m", "-json")
	var m struct{ Path, Dir string }
	if err := json.Unmarshal(mod, &m); err != nil || m.Path == "" || m.Dir == "" {
		t.Fatalf("go list -m -json: %v in %s", err, mod)
	}
	statSources(t, m.Dir)
	out := goCmd(t, "-C", m.Dir, "list", "-deps", "-json=ImportPath,Standard,Imports", "./...")
	g = Graph{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath string
			Standard   bool
			Imports    []string
		}
		err := dec.Decode(&p)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("decoding go list -deps -json: %v", err)
		}
		g[p.ImportPath] = &Package{Path: p.ImportPath, Standard: p.Standard, Imports: p.Imports}
	}
	if g[m.Path+"/record/transcript"] == nil || g["net/http"] == nil {
		t.Fatalf("go list -deps ./... in %s lists %d packages, neither transcript nor net/http among them", m.Dir, len(g))
	}
	return m.Path, g
}

// statSources reads the module's directories and stats its Go files and
// go.mod: go test caches a passing result keyed on the files the test itself
// touched, and go list, a child process, touches them unseen. Without this,
// a change that breaks a rule elsewhere would still pass from the cache.
func statSources(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") || name == "go.mod" || name == "go.sum" {
			_, err = os.Stat(path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func goCmd(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}

const mod = "example.com/m"

// graph builds a Graph from "path: import import" lines; a path with no dot
// in its first element is in the standard library.
func graph(lines ...string) Graph {
	g := Graph{}
	for _, line := range lines {
		path, imports, _ := strings.Cut(line, ":")
		first, _, _ := strings.Cut(path, "/")
		g[path] = &Package{Path: path, Standard: !strings.Contains(first, "."), Imports: strings.Fields(imports)}
	}
	return g
}

// clean is a graph that keeps every rule: the layout of the architecture.
var clean = []string{
	"net/http: io",
	"io:",
	"encoding/json: io",
	mod + "/record/transcript: encoding/json io",
	mod + "/record/session: " + mod + "/record/transcript",
	mod + "/record/pricing: " + mod + "/record/transcript",
	mod + "/engine/provider: " + mod + "/record/transcript",
	mod + "/engine/provider/internal/wire: " + mod + "/engine/provider net/http",
	mod + "/engine/provider/anthropic: " + mod + "/engine/provider/internal/wire",
	mod + "/engine/agent: " + mod + "/engine/provider " + mod + "/record/session",
	mod + "/record/sessionview: " + mod + "/record/session " + mod + "/record/pricing",
	mod + "/redrive/replay: " + mod + "/engine/agent " + mod + "/record/pricing " + mod + "/record/sessionview",
	mod + "/redrive/toolreplay: " + mod + "/record/transcript",
	mod + "/record/importer: " + mod + "/record/transcript",
	mod + "/learn: " + mod + "/record/session",
	mod + "/engine/subagent: " + mod + "/record/transcript",
	mod + "/cli/cmdkit: net/http " + mod + "/record/session",
	mod + "/cli/runcmd: " + mod + "/cli/cmdkit " + mod + "/engine/agent " + mod + "/engine/provider/anthropic",
	mod + "/cli/root: " + mod + "/cli/runcmd",
	mod + "/cmd/mecha: " + mod + "/cli/root",
	mod + "/internal/textfmt: unicode/utf8",
	mod + "/mcp/mcpclient: " + mod + "/engine/tool",
	mod + "/remote: " + mod + "/record/session net/http",
	mod + "/harness: " + mod + "/mcp/mcpclient " + mod + "/redrive/replay " + mod + "/remote",
}

// with returns clean with some lines replaced (by path) or added.
func with(lines ...string) Graph {
	g := graph(clean...)
	for path, p := range graph(lines...) {
		g[path] = p
	}
	return g
}

func TestCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		g    Graph
		want []string // violations, as Violation.String
	}{
		{"clean", graph(clean...), nil},
		{
			"transcript imports a module package",
			with(mod + "/record/transcript: io " + mod + "/record/pricing"),
			[]string{`rule "transcript is a leaf: it imports the standard library only": example.com/m/record/transcript -> example.com/m/record/pricing`},
		},
		{
			"transcript imports a third-party package",
			with(mod+"/record/transcript: io github.com/x/y", "github.com/x/y:"),
			[]string{`rule "transcript is a leaf: it imports the standard library only": example.com/m/record/transcript -> github.com/x/y`},
		},
		{
			"replay reaches net/http through agent and provider",
			with(mod + "/engine/provider: net/http"),
			[]string{
				`rule "transcript, session, pricing and replay stay off net/http": example.com/m/redrive/replay -> example.com/m/engine/agent -> example.com/m/engine/provider -> net/http`,
			},
		},
		{
			"session reaches net/http through the standard library",
			with(mod+"/record/session: "+mod+"/record/transcript net/rpc", "net/rpc: net/http"),
			[]string{
				`rule "learn decides what a model may read apart from any model: no agent, provider or network": example.com/m/learn -> example.com/m/record/session -> net/rpc -> net/http`,
				`rule "sessionview stays below replay and off the network": example.com/m/record/sessionview -> example.com/m/record/session -> net/rpc -> net/http`,
				`rule "transcript, session, pricing and replay stay off net/http": example.com/m/record/session -> net/rpc -> net/http`,
				`rule "transcript, session, pricing and replay stay off net/http": example.com/m/redrive/replay -> example.com/m/engine/agent -> example.com/m/record/session -> net/rpc -> net/http`,
			},
		},
		{
			"pricing imports net/http",
			with(mod + "/record/pricing: net/http"),
			[]string{
				`rule "sessionview stays below replay and off the network": example.com/m/record/sessionview -> example.com/m/record/pricing -> net/http`,
				`rule "transcript, session, pricing and replay stay off net/http": example.com/m/record/pricing -> net/http`,
				`rule "transcript, session, pricing and replay stay off net/http": example.com/m/redrive/replay -> example.com/m/record/pricing -> net/http`,
			},
		},
		{
			"a library imports a command",
			with(mod + "/engine/agent: " + mod + "/cli/runcmd"),
			[]string{
				`rule "the engine layer imports no layer above it": example.com/m/engine/agent -> example.com/m/cli/runcmd`,
				`rule "transcript, session, pricing and replay stay off net/http": example.com/m/redrive/replay -> example.com/m/engine/agent -> example.com/m/cli/runcmd -> example.com/m/cli/cmdkit -> net/http`,
			},
		},
		{
			"a command imports a test kit",
			with(mod + "/cli/runcmd: " + mod + "/testkit/fakellm"),
			[]string{`rule "no layer imports a test kit": example.com/m/cli/runcmd -> example.com/m/testkit/fakellm`},
		},
		{
			"the record reaches up to the engine",
			with(mod + "/record/session: " + mod + "/record/transcript " + mod + "/engine/tool"),
			[]string{
				"rule \"the CLI's kit builds nothing: no provider, tool, MCP client, sandbox or harness\": example.com/m/cli/cmdkit -> example.com/m/record/session -> example.com/m/engine/tool",
				`rule "the record layer imports no layer above it": example.com/m/record/session -> example.com/m/engine/tool`,
			},
		},
		{
			"sessionview reaches agent",
			with(mod + "/record/sessionview: " + mod + "/record/session " + mod + "/engine/agent"),
			[]string{
				`rule "sessionview stays below replay and off the network": example.com/m/record/sessionview -> example.com/m/engine/agent`,
				`rule "the record layer imports no layer above it": example.com/m/record/sessionview -> example.com/m/engine/agent`,
			},
		},
		{
			"subagent builds its own tools",
			with(mod + "/engine/subagent: " + mod + "/engine/tool/builtin"),
			[]string{`rule "subagent runs a child on the tools and provider it is handed: it builds none, replays nothing, stays off the network": example.com/m/engine/subagent -> example.com/m/engine/tool/builtin`},
		},
		{
			"a provider imports agent",
			with(mod + "/engine/provider/anthropic: " + mod + "/engine/provider/internal/wire " + mod + "/engine/agent"),
			[]string{`rule "providers never reach agent or session": example.com/m/engine/provider/anthropic -> example.com/m/engine/agent`},
		},
		{
			"a provider reaches session",
			with(mod+"/engine/provider/internal/wire: "+mod+"/engine/provider net/http "+mod+"/record/pricing", mod+"/record/pricing: "+mod+"/record/session"),
			[]string{
				`rule "providers never reach agent or session": example.com/m/engine/provider/anthropic -> example.com/m/engine/provider/internal/wire -> example.com/m/record/pricing -> example.com/m/record/session`,
				`rule "providers never reach agent or session": example.com/m/engine/provider/internal/wire -> example.com/m/record/pricing -> example.com/m/record/session`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, v := range Check(mod, tt.g, Rules) {
				got = append(got, v.String())
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestEveryRuleFires makes sure the table above breaks each rule at least
// once, so that no rule can be made toothless unnoticed.
func TestEveryRuleFires(t *testing.T) {
	t.Parallel()
	fired := map[string]bool{}
	for _, g := range []Graph{
		with(mod + "/record/transcript: " + mod + "/record/pricing"),
		with(mod + "/record/pricing: net/http"),
		with(mod + "/engine/agent: " + mod + "/cli/runcmd"),
		with(mod + "/engine/provider: " + mod + "/engine/agent"),
		with(mod + "/record/sessionview: " + mod + "/engine/provider"),
		with(mod + "/redrive/toolreplay: " + mod + "/record/sessionview " + mod + "/redrive/replay"),
		with(mod + "/record/importer: " + mod + "/record/transcript net/http"),
		with(mod + "/learn: " + mod + "/record/session " + mod + "/engine/agent"),
		with(mod + "/engine/subagent: " + mod + "/engine/agent " + mod + "/engine/tool/builtin"),
		with(mod + "/cli/cmdkit: " + mod + "/engine/sandbox"),
	} {
		for _, v := range Check(mod, g, Rules) {
			fired[v.Rule] = true
		}
	}
	// Each layer reaching the one above it, and the top one a test kit.
	for i, l := range Layers {
		from := mod + strings.TrimSuffix(strings.TrimPrefix(l.Packages[0], "."), "/...") + "/p"
		to := mod + "/testkit/fakellm"
		if i+1 < len(Layers) {
			to = mod + strings.TrimSuffix(strings.TrimPrefix(Layers[i+1].Packages[0], "."), "/...") + "/q"
		}
		for _, v := range Check(mod, with(from+": "+to), Rules) {
			fired[v.Rule] = true
		}
	}
	for _, r := range Rules {
		if !fired[r.Name] {
			t.Errorf("rule %q never fired", r.Name)
		}
	}
}

func TestUnmatched(t *testing.T) {
	t.Parallel()
	g := graph(clean...)
	delete(g, mod+"/record/transcript")
	got := Unmatched(mod, g, Rules)
	if want := []string{"transcript is a leaf: it imports the standard library only"}; !slices.Equal(got, want) {
		t.Errorf("Unmatched = %q, want %q", got, want)
	}
	if got := Unmatched(mod, graph(clean...), Rules); got != nil {
		t.Errorf("Unmatched(clean) = %q", got)
	}
}

func TestMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern string
		p       Package
		want    bool
	}{
		{"./record/transcript", Package{Path: mod + "/record/transcript"}, true},
		{"./record/transcript", Package{Path: mod + "/transcripts"}, false},
		{"./cli/...", Package{Path: mod + "/cli"}, true},
		{"./cli/...", Package{Path: mod + "/cli/runcmd"}, true},
		{"./cli/...", Package{Path: mod + "/client"}, false},
		{"./...", Package{Path: mod}, true},
		{"./...", Package{Path: "example.com/mother"}, false},
		{"net/http", Package{Path: "net/http", Standard: true}, true},
		{"net/http", Package{Path: "net/http/httptest", Standard: true}, false},
		{NonStandard, Package{Path: "net/http", Standard: true}, false},
		{NonStandard, Package{Path: "github.com/x/y"}, true},
	}
	for _, tt := range tests {
		if got := match(mod, tt.pattern, &tt.p); got != tt.want {
			t.Errorf("match(%q, %q) = %v, want %v", tt.pattern, tt.p.Path, got, tt.want)
		}
	}
}
