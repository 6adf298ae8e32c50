// Command mutate is a small mutation tester for the module's core packages
// (tests only: scripts/mutation.sh runs it; nothing imports it).
//
// For each package it parses the package's Go files (those the current
// platform builds, tests excluded) and lists every mutant of these kinds:
//
//	flip      a comparison negated: == and !=, < and >=, > and <=
//	boundary  a comparison moved by one: < and <=, > and >=
//	logic     && and || swapped
//	negate    the condition of an if or for negated: c -> !(c)
//	nil-error a function's error result returned as nil: return x, err -> return x, nil
//	delete    a call statement, a defer, an assignment or an x++ removed
//
// It runs the package's tests once with a coverage profile (which also
// checks that they pass unmutated), then shuffles the mutants with -seed
// and takes the first -n that lie on covered code. Each runs as
//
//	go test -count=1 -overlay OVERLAY PKG
//
// where OVERLAY replaces the one mutated file, so the tree is never
// touched. A mutant is killed when the tests fail (a timeout counts),
// survived when they pass, and not viable when it does not compile. It
// prints one line per mutant, then per package killed, survived, not
// viable and the score killed / (killed + survived), and the survivors
// with file:line.
//
// A package whose tests exercise code in child processes (the sandbox's
// helper) has that code uncovered in the profile; -cover=false samples all
// mutants instead.
//
// Usage:
//
//	go run ./testkit/mutate [-seed 1] [-n 25] [-p 1] [-cover=true] [-match RE] PKG...
package main
