package importrules

import (
	"fmt"
	"slices"
	"strings"
)

// NonStandard is the pattern of every package outside the standard library.
const NonStandard = "!std"

// Rule forbids a set of packages some imports.
type Rule struct {
	// Name says what the rule keeps; violations are reported under it.
	Name string
	// Packages are the patterns of the packages the rule constrains, and
	// Except those it leaves alone among them.
	Packages, Except []string
	// Forbid are the patterns of the imports the rule forbids.
	Forbid []string
	// Transitive forbids reaching them through any chain of imports, not
	// only importing them directly.
	Transitive bool
}

// Layer is one floor of the house: the packages under its folders.
type Layer struct {
	Name     string
	Packages []string
}

// Layers are the floors of docs/ARCHITECTURE.md from the ground up. A
// package may import its own layer and those below it, never one above.
var Layers = []Layer{
	{"leaves", []string{"./internal/..."}},
	{"record", []string{"./record/..."}},
	{"engine", []string{"./engine/..."}},
	{"mcp", []string{"./mcp/..."}},
	{"learn", []string{"./learn/..."}},
	{"redrive", []string{"./redrive/..."}},
	{"remote", []string{"./remote/..."}},
	{"harness", []string{"./harness/..."}},
	{"cli", []string{"./cli/..."}},
	{"main", []string{"./cmd/..."}},
}

// TestKits are the packages only tests import, and the benches: test-only
// packages that drive the built binary (bench/agentdojo).
var TestKits = []string{"./testkit/...", "./bench/..."}

// LayerRules turns layers into rules: each layer forbids every layer above
// it, and no layer imports a test kit. Direct imports suffice: a chain that
// climbs takes a direct step up somewhere, and that step is reported.
func LayerRules(layers []Layer, kits []string) []Rule {
	var rules []Rule
	var all []string
	for i, l := range layers {
		all = append(all, l.Packages...)
		var above []string
		for _, u := range layers[i+1:] {
			above = append(above, u.Packages...)
		}
		if len(above) == 0 {
			continue
		}
		rules = append(rules, Rule{
			Name:     fmt.Sprintf("the %s layer imports no layer above it", l.Name),
			Packages: l.Packages,
			Forbid:   above,
		})
	}
	return append(rules, Rule{Name: "no layer imports a test kit", Packages: all, Forbid: kits})
}

// Layered reports the module's packages (of g) that belong to no layer and
// are no test kit: a folder the layer rules would not see.
func Layered(module string, g Graph, layers []Layer, kits []string) (outside []string) {
	for _, path := range sortedPaths(g) {
		p := g[path]
		if p.Standard || (path != module && !strings.HasPrefix(path, module+"/")) {
			continue
		}
		in := matchAny(module, kits, p)
		for _, l := range layers {
			in = in || matchAny(module, l.Packages, p)
		}
		if !in {
			outside = append(outside, path)
		}
	}
	return outside
}

// Rules are the import rules of docs/ARCHITECTURE.md: the layers', then
// those that keep a package off something within or below its layer.
var Rules = append(LayerRules(Layers, TestKits), []Rule{
	{
		Name:     "transcript is a leaf: it imports the standard library only",
		Packages: []string{"./record/transcript"},
		Forbid:   []string{NonStandard},
	},
	{
		Name:       "transcript, session, pricing and replay stay off net/http",
		Packages:   []string{"./record/transcript", "./record/session", "./record/pricing", "./redrive/replay"},
		Forbid:     []string{"net/http"},
		Transitive: true,
	},
	{
		Name:       "sessionview stays below replay and off the network",
		Packages:   []string{"./record/sessionview/..."},
		Forbid:     []string{"./redrive/replay", "./engine/agent", "./engine/provider/...", "net/http"},
		Transitive: true,
	},
	{
		Name:       "toolreplay runs no model: it never reaches agent or a provider",
		Packages:   []string{"./redrive/toolreplay"},
		Forbid:     []string{"./engine/agent", "./engine/provider/...", "./redrive/replay"},
		Transitive: true,
	},
	{
		Name:       "importer only converts: no model, no network",
		Packages:   []string{"./record/importer"},
		Forbid:     []string{"./engine/agent", "./engine/provider/...", "./redrive/replay", "net/http"},
		Transitive: true,
	},
	{
		Name:       "learn decides what a model may read apart from any model: no agent, provider or network",
		Packages:   []string{"./learn"},
		Forbid:     []string{"./engine/agent", "./engine/provider/...", "./redrive/replay", "net/http"},
		Transitive: true,
	},
	{
		Name:       "subagent runs a child on the tools and provider it is handed: it builds none, replays nothing, stays off the network",
		Packages:   []string{"./engine/subagent"},
		Forbid:     []string{"./redrive/replay", "./engine/provider/anthropic", "./engine/provider/openai", "./engine/provider/mock", "./engine/tool/builtin", "./mcp/mcpclient", "net/http"},
		Transitive: true,
	},
	{
		Name:       "the CLI's kit builds nothing: no provider, tool, MCP client, sandbox or harness",
		Packages:   []string{"./cli/cmdkit", "./cli/complete"},
		Forbid:     []string{"./engine/...", "./mcp/...", "./harness", "./redrive/..."},
		Transitive: true,
	},
	{
		Name:       "providers never reach agent or session",
		Packages:   []string{"./engine/provider/..."},
		Forbid:     []string{"./engine/agent", "./record/session"},
		Transitive: true,
	},
}...)

// Package is a node of an import graph.
type Package struct {
	Path     string
	Standard bool     // in the standard library
	Imports  []string // the paths it imports directly
}

// Graph is an import graph by package path.
type Graph map[string]*Package

// Violation is one import chain that breaks a rule: Chain[0] is the
// constrained package, the last element the forbidden one.
type Violation struct {
	Rule  string
	Chain []string
}

func (v Violation) String() string {
	return fmt.Sprintf("rule %q: %s", v.Rule, strings.Join(v.Chain, " -> "))
}

// Check returns every violation of rules in g, whose module is module (what
// "./" stands for in patterns), sorted by package. For each constrained
// package it reports each forbidden package it imports (or, for a transitive
// rule, reaches) once, by a shortest chain; it does not look past a
// forbidden package for others.
func Check(module string, g Graph, rules []Rule) []Violation {
	var out []Violation
	for _, r := range rules {
		for _, path := range sortedPaths(g) {
			if !r.constrains(module, g[path]) {
				continue
			}
			for _, chain := range forbiddenChains(module, g, path, r) {
				out = append(out, Violation{Rule: r.Name, Chain: chain})
			}
		}
	}
	return out
}

// Unmatched returns the names of the rules that constrain no package of g:
// a rule that checks nothing passes vacuously, most likely because a
// package it names was renamed.
func Unmatched(module string, g Graph, rules []Rule) []string {
	var out []string
	for _, r := range rules {
		if !slices.ContainsFunc(sortedPaths(g), func(p string) bool { return r.constrains(module, g[p]) }) {
			out = append(out, r.Name)
		}
	}
	return out
}

func (r Rule) constrains(module string, p *Package) bool {
	return matchAny(module, r.Packages, p) && !matchAny(module, r.Except, p)
}

// forbiddenChains walks the imports of from breadth first (one level of them
// unless r is transitive) and returns a shortest chain to each forbidden
// package it meets.
func forbiddenChains(module string, g Graph, from string, r Rule) [][]string {
	parent := map[string]string{from: ""}
	queue := []string{from}
	var chains [][]string
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		p := g[cur]
		if p == nil {
			continue
		}
		for _, imp := range p.Imports {
			if _, seen := parent[imp]; seen {
				continue
			}
			parent[imp] = cur
			target := g[imp]
			if target == nil {
				target = &Package{Path: imp}
			}
			if matchAny(module, r.Forbid, target) {
				chains = append(chains, chainTo(parent, imp))
				continue
			}
			if r.Transitive {
				queue = append(queue, imp)
			}
		}
	}
	return chains
}

func chainTo(parent map[string]string, to string) []string {
	var chain []string
	for p := to; p != ""; p = parent[p] {
		chain = append(chain, p)
	}
	slices.Reverse(chain)
	return chain
}

func matchAny(module string, patterns []string, p *Package) bool {
	return slices.ContainsFunc(patterns, func(pat string) bool { return match(module, pat, p) })
}

// match reports whether p matches pattern (see the package comment).
func match(module, pattern string, p *Package) bool {
	if pattern == NonStandard {
		return !p.Standard
	}
	if rest, ok := strings.CutPrefix(pattern, "."); ok && (rest == "" || rest[0] == '/') {
		pattern = module + rest
	}
	if prefix, ok := strings.CutSuffix(pattern, "/..."); ok {
		return p.Path == prefix || strings.HasPrefix(p.Path, prefix+"/")
	}
	return p.Path == pattern
}

func sortedPaths(g Graph) []string {
	paths := make([]string, 0, len(g))
	for path := range g {
		paths = append(paths, path)
	}
	slices.Sort(paths)
	return paths
}
