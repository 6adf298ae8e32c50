package root

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/cli/cmdkit"
)

// entrance says what a command runs: a model ("model"), tools without a
// model ("tools"), or neither ("none"). pkg names the package that does
// the running when it is not the one the command's RunE is in.
type entrance struct {
	kind string
	pkg  string
}

// entrances classifies every command of the tree. A command missing here
// fails TestEveryEntranceGoesThroughTheHarness: whoever adds one says what
// it runs, and if it runs a model or a tool, it must go through the harness.
var entrances = map[string]entrance{
	"mecha":                             {kind: "model", pkg: "cli/chatcmd"}, // a chat, on a terminal
	"mecha chat":                        {kind: "model"},
	"mecha run":                         {kind: "model"},
	"mecha replay":                      {kind: "model"},
	"mecha regress":                     {kind: "model", pkg: "cli/replaycmd"},
	"mecha reflect":                     {kind: "model"},
	"mecha distill":                     {kind: "model"},
	"mecha tool call":                   {kind: "tools"},
	"mecha tool list":                   {kind: "tools"}, // builds the surface to show it
	"mecha rerun":                       {kind: "tools"},
	"mecha rewind":                      {kind: "tools"}, // puts files back, through the harness
	"mecha mcp serve":                   {kind: "tools"},
	"mecha mcp call":                    {kind: "tools"},
	"mecha script":                      {kind: "none"}, // writes a script; its calls are "mecha tool call"
	"mecha mcp list":                    {kind: "none"}, // starts servers and lists their tools; calls none
	"mecha mcp proxy":                   {kind: "none"}, // forwards another client's calls; runs no tool of mecha's
	"mecha learn":                       {kind: "none"},
	"mecha import":                      {kind: "none"},
	"mecha doctor":                      {kind: "none"},
	"mecha config":                      {kind: "none"},
	"mecha config path":                 {kind: "none"},
	"mecha config show":                 {kind: "none"},
	"mecha trust":                       {kind: "none"},
	"mecha sessions":                    {kind: "none"},
	"mecha sessions list":               {kind: "none"},
	"mecha sessions show":               {kind: "none"},
	"mecha sessions path":               {kind: "none"},
	"mecha sessions stats":              {kind: "none"},
	"mecha sessions search":             {kind: "none"},
	"mecha sessions rm":                 {kind: "none"},
	"mecha sessions reindex":            {kind: "none"},
	"mecha sessions prune":              {kind: "none"},
	"mecha sessions view":               {kind: "none"},
	"mecha sessions export":             {kind: "none"},
	"mecha sessions push":               {kind: "none"}, // uploads transcripts through harness.OpenRemote
	"mecha sessions pull":               {kind: "none"},
	"mecha sessions share":              {kind: "none"},
	"mecha regress pin":                 {kind: "none"}, // pushes a session and adds a pin
	"mecha regress report":              {kind: "none"}, // merges shards another machine ran
	"mecha tool":                        {kind: "none"},
	"mecha mcp":                         {kind: "none"},
	"mecha completion":                  {kind: "none"},
	"mecha completion bash":             {kind: "none"},
	"mecha completion zsh":              {kind: "none"},
	"mecha completion fish":             {kind: "none"},
	"mecha completion powershell":       {kind: "none"},
	"mecha help":                        {kind: "none"},
	"mecha __complete":                  {kind: "none"},
	"mecha __completeNoDesc":            {kind: "none"},
	"mecha completion __complete":       {kind: "none"},
	"mecha completion __completeNoDesc": {kind: "none"},
}

// builders are the packages an entrance must not import: the providers'
// clients, the built-in tools and the agent tool, which only the harness
// builds (and wraps in the one policy chain).
var builders = []string{
	"engine/provider/anthropic", "engine/provider/openai", "engine/provider/mock",
	"engine/tool/builtin", "engine/subagent",
}

// handmade are the calls by which an entrance would assemble a loop, a
// policy chain, a sandbox or MCP servers' tools by hand (their types it may
// name).
var handmade = map[string][]string{
	"engine/agent":   {"Run"},
	"engine/tool":    {"Gate", "Interlock", "Redact", "Policy", "NewTerminalAsker"},
	"engine/sandbox": {"Resolve", "Command", "Probe"},
	"mcp/mcpclient":  {"Start"},
}

// TestEveryEntranceGoesThroughTheHarness walks the command tree: every
// command is classified, and every one that runs a model or a tool is in a
// package that imports the harness, builds no provider, tool, MCP client,
// sandbox or child itself, and assembles no loop or policy chain by hand.
// So the only tools an entrance can run are those the harness wrapped in
// tool.Policy, and the only loop is the harness's.
func TestEveryEntranceGoesThroughTheHarness(t *testing.T) {
	root := NewCmdRoot(&cmdkit.Env{Out: io.Discard, Err: io.Discard})
	seen := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := c.CommandPath()
		seen[path] = true
		e, ok := entrances[path]
		switch {
		case !ok:
			t.Errorf("%q is not classified in entrances: say whether it runs a model, tools or neither", path)
		case e.kind == "model" || e.kind == "tools":
			pkg := e.pkg
			if pkg == "" {
				pkg = packageOf(t, c)
			}
			checkEntrance(t, path, pkg)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for path := range entrances {
		if !seen[path] && !strings.Contains(path, "__complete") {
			t.Errorf("entrances names %q, which the tree does not have", path)
		}
	}
}

// packageOf is the module-relative package of the function a command runs.
func packageOf(t *testing.T, c *cobra.Command) string {
	t.Helper()
	var fn any = c.RunE
	if c.RunE == nil {
		fn = c.Run
	}
	name := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()).Name()
	const mod = "github.com/mecha-agent/mecha/"
	rest, ok := strings.CutPrefix(name, mod)
	if !ok {
		t.Fatalf("%s runs %s, outside the module", c.CommandPath(), name)
	}
	dir, _, _ := strings.Cut(rest, ".")
	return dir
}

// checkEntrance holds the package of an entrance to the harness.
func checkEntrance(t *testing.T, path, pkg string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", filepath.FromSlash(pkg), "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: no Go files in %s", path, pkg)
	}
	harness := false
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		file, err := parser.ParseFile(fset, f, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]string{} // local name -> module-relative path
		for _, imp := range file.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			rel, ok := strings.CutPrefix(p, "github.com/mecha-agent/mecha/")
			if !ok {
				continue
			}
			if rel == "harness" {
				harness = true
			}
			if slices.Contains(builders, rel) {
				t.Errorf("%s (%s) imports %s: only the harness builds providers, tools, MCP clients, the sandbox and children", path, f, rel)
			}
			local := rel[strings.LastIndex(rel, "/")+1:]
			if imp.Name != nil {
				local = imp.Name.Name
			}
			names[local] = rel
		}
		ast.Inspect(file, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			x, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			rel := names[x.Name]
			if slices.Contains(handmade[rel], sel.Sel.Name) {
				t.Errorf("%s (%s) uses %s.%s: the loop, the policy chain, the sandbox and MCP servers are the harness's to build", path, fset.Position(sel.Pos()), rel, sel.Sel.Name)
			}
			return true
		})
	}
	if !harness {
		t.Errorf("%s runs in %s, which does not import the harness", path, pkg)
	}
}
