// Package sessionindex keeps an index of a session store in SQLite beside
// it (.index/index.sqlite under the store's directory, through the pure-Go driver
// modernc.org/sqlite), so that listing, totalling, finding children and
// searching cost about the same whatever the size of the transcripts.
//
// The files stay the truth; the index is a cache that deleting loses
// nothing of. Every reader first brings it in step: it stats each .jsonl
// file of the store and compares (size, mtime, inode) with what it
// indexed. An unchanged file costs that stat; a file that grew is read
// from where indexing stopped, the end of its last complete line (the
// files are append-only), and a final line with no newline yet (torn, or
// being written) is indexed provisionally, to be read again; a file that
// shrank, changed in place or was replaced is indexed again whole; a
// session whose file is gone loses its rows. Several processes may bring
// it in step at once: each file's rows are written in a transaction that
// first checks the file's row is still as the reader found it (WAL, busy
// timeouts), so a kill -9 at any point leaves an index the next reader
// finds consistent.
//
// What it holds, per session (the sessions table): the header's fields,
// the kind, the parent, the file's size, mtime and inode and the bytes
// indexed, the turns, the last stop reason, whether a summary ended the
// file, and the token totals (costs are priced when asked, at the day's
// prices); its summary records as written (sums), for stats; and, per
// line and per role and tool, the text "sessions search" searches (message
// text and thinking, tool inputs' values, tool results, compaction
// summaries) in a contentless FTS5 table with the trigram tokenizer, case
// sensitive, whose rows name their line (spans). A search takes the lines
// holding every trigram of its literal (or of the literal runs a regular
// expression requires) and verifies each on the file itself
// (session.Store.SearchLines), so its matches are those of the full scan.
//
// Beside the database, .index/index.list is a snapshot of what the
// listings answer, written whole and renamed into place after the database
// was brought in step; a reader whose every file matches its entry answers
// from it without opening the database. It is laid out in parts, each with
// its CRC (a header, blocks of entries newest first, then every entry's
// summaries, in binary when that decodes to the same record), so that a
// limited listing reads its first blocks and only stats reads the
// summaries. With the snapshot, the store directory's mtime is recorded
// (when it last changed over two seconds before, so a change in the same
// clock tick cannot hide): unchanged, no session was created, removed or
// renamed, so a reader stats the snapshot's files by name (fstatat on the
// directory) without reading the directory, and a limited listing stats
// only the sessions it shows (the files are append-only, so no header
// changed and the newest sessions are the snapshot's). A reader that finds
// a few sessions changed brings only those in step and patches the
// snapshot; past maxPatch, or a quarter of the store, it rebuilds it. The
// index lives in a directory of its own so that its files never change
// the store directory's mtime.
//
// A search checks the store as a listing checks it, and gets back the
// candidate sessions in the listing's order (session.Narrowed) without
// decoding the others. Its query of the full-text table is made while the
// files are stat'd, from the moment the snapshot they are checked against
// is open (a snapshot is written after the database it was made from, so
// the query reads the database at least that far along), and its answer
// is used only when every file matched that snapshot; otherwise it is
// asked again once the index is in step. A sync that wrote over 32 MB of
// text (a first indexing) merges the full-text index into one segment,
// which a query's every trigram is then sought in once. After a sync that
// wrote, a write-ahead log past 1 MB is checkpointed and emptied: the
// first process to open the database rebuilds the log's index from the
// whole log, which every search would otherwise pay.
//
// A large piece of indexing (a first indexing of thousands of sessions or
// hundreds of megabytes: a minute a gigabyte) that a reader finds is
// handed to SetBackfill's start when one is set (the CLI's starts a
// background process, which calls CatchUp), and the reader reads the
// files this time. Indexed in place, it is said in one line before it
// starts, and, given a channel with StopOn (the CLI's first Ctrl-C),
// stops between two sessions when it closes: what was committed is kept
// and the reader returns ErrInterrupted. Each transaction prepares its
// statements once.
//
// A missing, unreadable, corrupt or foreign-version index is rebuilt, said
// in one line; an index that cannot be written at all (a read-only store)
// is passed over with one line, and the files are read as before.
package sessionindex
