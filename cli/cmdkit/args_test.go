package cmdkit

import (
	"errors"
	"testing"

	"github.com/spf13/cobra"
)

func TestDistance(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"json", "json", 0}, {"jsn", "json", 1}, {"lsit", "list", 2}, {"", "abc", 3}, {"kitten", "sitting", 3}} {
		if got := distance(tc.a, tc.b); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestSuggestions(t *testing.T) {
	t.Parallel()
	parent := &cobra.Command{Use: "sessions", Args: NoArgs}
	parent.AddCommand(&cobra.Command{Use: "list", Run: func(*cobra.Command, []string) {}},
		&cobra.Command{Use: "show", Run: func(*cobra.Command, []string) {}})
	parent.PersistentFlags().Bool("verbose", false, "")
	parent.Commands()[0].Flags().Bool("json", false, "")
	for _, tc := range []struct {
		err  error
		want string
	}{
		{NoArgs(parent, []string{"lst"}), `unknown command "lst" for "sessions"; did you mean "list"? (see 'sessions --help')`},
		{NoArgs(parent, []string{"sho"}), `unknown command "sho" for "sessions"; did you mean "show"? (see 'sessions --help')`},
		{NoArgs(parent, []string{"zzzz"}), `unknown command "zzzz" for "sessions" (see 'sessions --help')`},
		{FlagError(parent.Commands()[0], errors.New("unknown flag: --jsno")), `unknown flag: --jsno; did you mean "--json"?`},
		{FlagError(parent.Commands()[0], errors.New("unknown flag: --verbos")), `unknown flag: --verbos; did you mean "--verbose"?`},
		{FlagError(parent.Commands()[0], errors.New("unknown flag: --qqqqq")), `unknown flag: --qqqqq`},
		{FlagError(parent.Commands()[0], errors.New("invalid argument")), `invalid argument`},
	} {
		var u *UsageError
		if !errors.As(tc.err, &u) || tc.err.Error() != tc.want {
			t.Errorf("error %v, want the usage error %q", tc.err, tc.want)
		}
	}
}
