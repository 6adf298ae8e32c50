// Package cli holds mecha's commands. Each command has an Options struct, a
// NewCmdX constructor and an xRun function; errors become exit codes in one
// place, Run, and nowhere else.
package cli
