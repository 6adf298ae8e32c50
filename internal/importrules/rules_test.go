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
	if g[m.Path+"/transcript"] == nil || g["net/http"] == nil {
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
	mod + "/transcript: encoding/json io",
	mod + "/session: " + mod + "/transcript",
	mod + "/pricing: " + mod + "/transcript",
	mod + "/provider: " + mod + "/transcript",
	mod + "/provider/internal/wire: " + mod + "/provider net/http",
	mod + "/provider/anthropic: " + mod + "/provider/internal/wire",
	mod + "/agent: " + mod + "/provider " + mod + "/session",
	mod + "/sessionview: " + mod + "/session " + mod + "/pricing",
	mod + "/replay: " + mod + "/agent " + mod + "/pricing " + mod + "/sessionview",
	mod + "/toolreplay: " + mod + "/transcript",
	mod + "/importer: " + mod + "/transcript",
	mod + "/learn: " + mod + "/session",
	mod + "/subagent: " + mod + "/transcript",
	mod + "/internal/cmdutil: net/http " + mod + "/session",
	mod + "/internal/cmd/run: " + mod + "/internal/cmdutil " + mod + "/agent " + mod + "/provider/anthropic",
	mod + "/internal/cmd/root: " + mod + "/internal/cmd/run",
	mod + "/cmd/mecha: " + mod + "/internal/cmd/root",
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
			with(mod + "/transcript: io " + mod + "/pricing"),
			[]string{`rule "transcript is a leaf: it imports the standard library only": example.com/m/transcript -> example.com/m/pricing`},
		},
		{
			"transcript imports a third-party package",
			with(mod+"/transcript: io github.com/x/y", "github.com/x/y:"),
			[]string{`rule "transcript is a leaf: it imports the standard library only": example.com/m/transcript -> github.com/x/y`},
		},
		{
			"replay reaches net/http through agent and provider",
			with(mod + "/provider: net/http"),
			[]string{
				`rule "transcript, session, pricing and replay stay off net/http": example.com/m/replay -> example.com/m/agent -> example.com/m/provider -> net/http`,
			},
		},
		{
			"session reaches net/http through the standard library",
			with(mod+"/session: "+mod+"/transcript net/rpc", "net/rpc: net/http"),
			[]string{
				`rule "learn decides what a model may read apart from any model: no agent, provider or network": example.com/m/learn -> example.com/m/session -> net/rpc -> net/http`,
				`rule "sessionview stays below replay and off the network": example.com/m/sessionview -> example.com/m/session -> net/rpc -> net/http`,
				`rule "transcript, session, pricing and replay stay off net/http": example.com/m/replay -> example.com/m/agent -> example.com/m/session -> net/rpc -> net/http`,
				`rule "transcript, session, pricing and replay stay off net/http": example.com/m/session -> net/rpc -> net/http`,
			},
		},
		{
			"pricing imports net/http",
			with(mod + "/pricing: net/http"),
			[]string{
				`rule "sessionview stays below replay and off the network": example.com/m/sessionview -> example.com/m/pricing -> net/http`,
				`rule "transcript, session, pricing and replay stay off net/http": example.com/m/pricing -> net/http`,
				`rule "transcript, session, pricing and replay stay off net/http": example.com/m/replay -> example.com/m/pricing -> net/http`,
			},
		},
		{
			"a library imports internal/cmd",
			with(mod + "/agent: " + mod + "/internal/cmd/run"),
			[]string{
				`rule "only cmd/mecha and internal/cmd/... import internal/cmd/...": example.com/m/agent -> example.com/m/internal/cmd/run`,
				`rule "transcript, session, pricing and replay stay off net/http": example.com/m/replay -> example.com/m/agent -> example.com/m/internal/cmd/run -> example.com/m/internal/cmdutil -> net/http`,
			},
		},
		{
			"cmdutil is not under internal/cmd",
			with(mod + "/internal/cmdutil: " + mod + "/internal/cmd/root"),
			[]string{`rule "only cmd/mecha and internal/cmd/... import internal/cmd/...": example.com/m/internal/cmdutil -> example.com/m/internal/cmd/root`},
		},
		{
			"sessionview reaches agent",
			with(mod + "/sessionview: " + mod + "/session " + mod + "/agent"),
			[]string{`rule "sessionview stays below replay and off the network": example.com/m/sessionview -> example.com/m/agent`},
		},
		{
			"subagent builds its own tools",
			with(mod + "/subagent: " + mod + "/tool/builtin"),
			[]string{`rule "subagent runs a child on the tools and provider it is handed: it builds none, replays nothing, stays off the network": example.com/m/subagent -> example.com/m/tool/builtin`},
		},
		{
			"a provider imports agent",
			with(mod + "/provider/anthropic: " + mod + "/provider/internal/wire " + mod + "/agent"),
			[]string{`rule "providers never reach agent or session": example.com/m/provider/anthropic -> example.com/m/agent`},
		},
		{
			"a provider reaches session",
			with(mod+"/provider/internal/wire: "+mod+"/provider net/http "+mod+"/pricing", mod+"/pricing: "+mod+"/session"),
			[]string{
				`rule "providers never reach agent or session": example.com/m/provider/anthropic -> example.com/m/provider/internal/wire -> example.com/m/pricing -> example.com/m/session`,
				`rule "providers never reach agent or session": example.com/m/provider/internal/wire -> example.com/m/pricing -> example.com/m/session`,
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
		with(mod + "/transcript: " + mod + "/pricing"),
		with(mod + "/pricing: net/http"),
		with(mod + "/agent: " + mod + "/internal/cmd/run"),
		with(mod + "/provider: " + mod + "/agent"),
		with(mod + "/sessionview: " + mod + "/provider"),
		with(mod + "/toolreplay: " + mod + "/sessionview " + mod + "/replay"),
		with(mod + "/importer: " + mod + "/transcript net/http"),
		with(mod + "/learn: " + mod + "/session " + mod + "/agent"),
		with(mod + "/subagent: " + mod + "/agent " + mod + "/tool/builtin"),
	} {
		for _, v := range Check(mod, g, Rules) {
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
	delete(g, mod+"/transcript")
	got := Unmatched(mod, g, Rules)
	if want := []string{Rules[0].Name}; !slices.Equal(got, want) {
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
		{"./transcript", Package{Path: mod + "/transcript"}, true},
		{"./transcript", Package{Path: mod + "/transcripts"}, false},
		{"./internal/cmd/...", Package{Path: mod + "/internal/cmd"}, true},
		{"./internal/cmd/...", Package{Path: mod + "/internal/cmd/run"}, true},
		{"./internal/cmd/...", Package{Path: mod + "/internal/cmdutil"}, false},
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
