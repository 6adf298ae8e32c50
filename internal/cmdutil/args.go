package cmdutil

import "github.com/spf13/cobra"

// NoArgs refuses arguments, naming an unknown subcommand when it looks like one.
func NoArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if cmd.HasSubCommands() {
		return Usagef("unknown command %q for %q (see '%s --help')", args[0], cmd.CommandPath(), cmd.CommandPath())
	}
	return Usagef("%s takes no arguments, got %q", cmd.CommandPath(), args[0])
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
