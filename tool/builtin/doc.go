// Package builtin provides mecha's built-in tools: fs_read, fs_list,
// fs_write, fs_edit and shell. All returns them in that order.
//
// # Workspace confinement
//
// The file tools only touch files inside a Workspace. A path argument is
// relative to the workspace root or absolute inside it, and must still be
// inside once every symbolic link in it is followed. Resolution walks the
// path component by component the way the kernel does, and it does not need
// the path to exist: a new file under a symlinked directory that points
// outside is refused, and a dangling link is judged by its target. The
// tools then operate on the resolved path, so what is checked is what is
// opened. A refused path is an error result (not a Go error) naming the
// path and saying it is outside the workspace. The workspace root itself may
// be a symbolic link; it is resolved once, by NewWorkspace.
//
// The shell tool runs commands with the workspace root as working directory
// but does not confine them: it declares every capability.
//
// # Results
//
// Problems the model can act on (bad input, unknown fields, a path outside
// the workspace, a missing file, an ambiguous edit, a failing command) are
// results with IsError set. Go errors are kept for the harness: a context
// that was cancelled.
//
// fs_read returns the file's text as stored, without line numbers, so that
// it can be quoted in fs_edit's old_string. When it returns less than the
// whole file (offset, limit, or the size limit) a last line in square
// brackets says which lines were shown out of how many and the offset to
// continue from.
//
// Results are bounded by Options.MaxResultBytes (64 KiB by default). A
// shell command's output keeps its head and its tail with a marker in
// between that accounts for every byte:
//
//	[... 123456 bytes cut: showing the first 32768 and the last 32768 of 188992 ...]
//
// Cuts never fall inside a UTF-8 sequence. The shell keeps only the head and
// the tail in memory, whatever the command prints.
//
// # Shell processes
//
// A command runs as /bin/sh -c in a process group of its own, with empty
// standard input and standard output and error combined. On timeout, on
// cancellation, and when the shell exits, the whole group is killed with
// SIGKILL, so background children neither outlive the call nor hold its
// output open.
package builtin
