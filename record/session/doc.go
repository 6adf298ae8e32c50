// Package session is mecha's transcript store: where session files live,
// how ids are made and resolved, how records are appended so that neither a
// crash nor a concurrent writer can corrupt a line, and how transcripts are
// read back. A Store is the one handle on it: it resolves an argument to
// the Ref of a session (its directory and id), lists the store, reads,
// locks, creates, appends to, searches and removes sessions, and totals
// them. A transcript is read record by record without holding the file
// (Scan), tolerantly in full (Load, built on Scan), by its header only
// (PeekMeta; Store.List for all of them), or by its summaries only, one
// file (ReadSummaries) or the whole store in one pass (Store.Summaries,
// Store.Totals).
//
// Durability: each record is encoded whole and written with a single
// write(2) on a file opened O_APPEND, under an exclusive flock, so two
// processes appending to one session never interleave. A failed write is
// rolled back (the file is truncated to where the record began) and the
// writer refuses every later append, so the file never holds a record that
// depends on one that is missing. Writers fsync when told to (the agent does
// so at turn boundaries) and on Close, and fsync the directory after
// creating a file.
//
// One writer at a time: whatever attaches to a session to write in it (a
// run, a resumed run, a replay recording into its new session) holds the
// session's lock (Acquire; Create takes it for the writer it returns) for
// its whole life, and a second attach fails at once naming the holder's
// pid. Readers never take it. The lock dies with its process.
//
// Hostile files: readers open only regular files and never block on a
// FIFO; a header is at most transcript.MaxHeader and any other line at
// most transcript.MaxLine (a longer one is skipped, never held); the file
// name is the id, whatever the header claims (Identify).
package session
