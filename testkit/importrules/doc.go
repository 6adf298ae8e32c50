// Package importrules holds the import rules of docs/ARCHITECTURE.md as
// data, and the checker that holds a package graph to them. Its test loads
// the module's graph with `go list -deps -json` and fails on any violation,
// so that a rule written in the doc is also checked by `go test ./...`.
//
// A rule constrains the packages it names (less its exceptions) and forbids
// them some imports: direct ones only, or, when the rule is transitive,
// anything they reach. A violation names the rule and the chain of imports
// that breaks it, shortest first:
//
//	rule "transcript, session, pricing and replay stay off net/http": github.com/mecha-agent/mecha/replay -> github.com/mecha-agent/mecha/agent -> net/http
//
// Patterns are import paths: "./x" is x in the module under test, a
// trailing "/..." also matches every package below it (as with the go
// command), and NonStandard matches any package outside the standard
// library. The graph is the one that builds into binaries; imports made only
// by tests are not checked.
//
// One more written rule is checked at the source level: commands take the
// environment, clock, time zone, HTTP client, streams and GC settings from
// their cmdkit.Env (CheckWorldReads), never from os, time, net/http or
// runtime/debug directly.
package importrules
