// Package cmdkit is what mecha's commands share: the Env they get from the
// world (streams, terminal detection, environment, clock, time zone, HTTP
// client, GC tuning), config loading and session resolution, the typed
// errors that Main turns into exit codes, and the small formatters every
// renderer uses. Commands live in internal/cmd/<noun>; none of them reads
// the process's environment, clock or network client directly.
package cmdkit
