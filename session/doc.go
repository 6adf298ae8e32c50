// Package session is mecha's transcript store: where session files live,
// how ids are made and resolved, how records are appended so that neither a
// crash nor a concurrent writer can corrupt a line, and how transcripts are
// read back: record by record without holding the file (Scan), tolerantly
// in full (Load, built on Scan), by their header only (PeekMeta, List), or
// by their summaries only, one file (ReadSummaries) or a whole directory in
// one pass (ReadDirSummaries).
//
// Durability: each record is encoded whole and written with a single
// write(2) on a file opened O_APPEND, under an exclusive flock, so two
// processes appending to one session never interleave. A failed write is
// rolled back (the file is truncated to where the record began) and the
// writer refuses every later append, so the file never holds a record that
// depends on one that is missing. Writers fsync when told to (the agent does
// so at turn boundaries) and on Close, and fsync the directory after
// creating a file.
package session
