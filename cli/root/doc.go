// Package root is mecha's command tree: it assembles the per-noun commands
// of internal/cmd, runs one command line, and maps the typed errors they
// return to exit codes in one place (ExitCode).
package root
