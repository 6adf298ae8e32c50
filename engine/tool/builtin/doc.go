// Package builtin provides mecha's built-in tools: fs_read, fs_list,
// fs_write, fs_edit, fs_grep, fs_glob, shell and web_fetch. All returns
// them in that order.
//
// # Workspace confinement
//
// The file tools only touch files inside a Workspace, and every access goes
// through an os.Root opened on it once, by NewWorkspace. A path argument is
// relative to the workspace root, or absolute and starting with the
// workspace directory (as given or resolved); one that climbs out as
// written ("../x", "a/../../x") is refused before anything is looked up.
// The rest is the kernel's: each element is resolved relative to the open
// directory, symbolic links and ".." like the kernel does, and a step out
// of the root fails. A symbolic link inside the workspace works when its
// target is relative and stays inside; one that leads out, and one whose
// target is absolute (os.Root refuses those even when they point inside),
// is refused. There is no check before the use for a process to race with:
// a directory swapped for a link to outside, before a call or during it,
// can make the call fail but never lets it reach outside.
//
// The search tools, fs_grep and fs_glob, walk a directory as fs_list does:
// each subdirectory opened as an os.Root of its own from the one it was
// listed in, so no entry is looked up again from the workspace root. They
// follow no symbolic link met on the way, skip .git and what the
// workspace's .gitignore files exclude (go-git's matcher; a path named
// explicitly is searched even when ignored), and fs_grep skips binary files
// (a NUL byte anywhere) and matches line by line (see walk.go).
//
// A refused path is an error result (not a Go error) naming the path as
// given and saying it is outside the workspace. Writes follow links in the
// last element of the path (through the root) and replace the file they
// lead to, keeping the link; they write a temporary file next to it and
// rename it into place, both inside the root. The workspace root itself may
// be a symbolic link; it is resolved once, by NewWorkspace, and the tools
// keep using the directory it led to even if it is moved.
//
// The shell tool runs commands with the workspace root as working directory.
// Unconfined (the zero Options.Sandbox) it declares every capability. With a
// sandbox (package sandbox) each command runs through mecha's re-executed
// helper with a private TMPDIR removed after the call; with the network cut
// the shell declares neither ReachesNetwork nor External.
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
// fs_grep's result is path:line:text lines, and fs_glob's paths, each
// stopped at a count (max_matches, max_results) or at MaxResultBytes,
// whichever comes first, with a last line in square brackets saying so.
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
// Options.Secrets are replaced, with their encoded forms (tool.Redactor),
// in what a tool reads before it is cut: a command's output as it streams,
// a file as fs_read reads it and as fs_grep searches it (so a pattern
// cannot probe for a secret either), a fetched body and the result built
// from it.
// A secret across a cut is replaced whole, never left in part; where a
// read limit cuts a body, a secret's beginning at its end is dropped.
//
// # Shell processes
//
// A command runs as /bin/sh -c in a process group of its own, with empty
// standard input and standard output and error combined. On timeout, on
// cancellation, and when the shell exits, the whole group is killed with
// SIGKILL, so background children neither outlive the call nor hold its
// output open.
//
// The group also dies with mecha, however mecha ends, SIGKILL included.
// Its leader is a watcher (a second /bin/sh, with an empty environment)
// blocked reading a pipe whose only write end mecha holds; the kernel closes
// that end when mecha dies, and the watcher kills its group. The shell
// itself also gets a parent-death signal (SIGKILL, Linux), with the thread
// that started it kept for its life, since that signal follows the thread
// and not the process. A process that leaves the group (setsid) escapes
// both, as it escapes the timeout.
package builtin
