package cmdkit

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// NoArgs refuses arguments, naming an unknown subcommand when it looks like
// one and suggesting the nearest ones ("did you mean").
func NoArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if cmd.HasSubCommands() {
		if cmd.SuggestionsMinimumDistance <= 0 {
			cmd.SuggestionsMinimumDistance = 2
		}
		return Usagef("unknown command %q for %q%s (see '%s --help')", args[0], cmd.CommandPath(), didYouMean(cmd.SuggestionsFor(args[0])), cmd.CommandPath())
	}
	return Usagef("%s takes no arguments, got %q", cmd.CommandPath(), args[0])
}

// didYouMean is "; did you mean "x"?" (or "x" or "y"), "" with no
// suggestion.
func didYouMean(names []string) string {
	if len(names) == 0 {
		return ""
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return "; did you mean " + strings.Join(q, " or ") + "?"
}

// DidYouMean is "; did you mean "x"?" naming the names nearest to typed
// (within two edits, or starting with it); "" when none is near.
func DidYouMean(typed string, names []string) string {
	var near []string
	for _, n := range names {
		if d := distance(typed, n); d <= 2 || (len(typed) > 1 && strings.HasPrefix(n, typed)) {
			near = append(near, n)
		}
	}
	return didYouMean(near)
}

// FlagError turns a flag parsing error into a usage error, suggesting the
// nearest flags of cmd when the flag is unknown ("--jsn": "--json").
func FlagError(cmd *cobra.Command, err error) error {
	const prefix = "unknown flag: --"
	msg := err.Error()
	if !strings.HasPrefix(msg, prefix) {
		return &UsageError{Err: err}
	}
	typed := strings.TrimPrefix(msg, prefix)
	var near []string
	seen := map[string]bool{}
	visit := func(f *pflag.Flag) {
		if f.Hidden || seen[f.Name] {
			return
		}
		seen[f.Name] = true
		if d := distance(typed, f.Name); d <= 2 || (len(typed) > 1 && strings.HasPrefix(f.Name, typed)) {
			near = append(near, "--"+f.Name)
		}
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	return &UsageError{Err: fmt.Errorf("%s%s", msg, didYouMean(near))}
}

// distance is the Levenshtein distance between a and b, in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// ExactArgs is cobra.ExactArgs with a usage error and a message naming what is expected.
func ExactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return Usagef("%s needs %s (got %d arguments)", cmd.CommandPath(), what, len(args))
		}
		return nil
	}
}

// RangeArgs is cobra.RangeArgs with a usage error naming what is expected.
func RangeArgs(lo, hi int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < lo || len(args) > hi {
			return Usagef("%s needs %s (got %d arguments)", cmd.CommandPath(), what, len(args))
		}
		return nil
	}
}

// Changed reports whether a flag was given on the command line, so a
// command can tell a flag's default from the same value given.
func Changed(cmd *cobra.Command) func(string) bool {
	return func(name string) bool { return cmd.Flags().Changed(name) }
}
