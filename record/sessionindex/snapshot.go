package sessionindex

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// ListName is the listing snapshot beside the index: what List, Totals,
// Summaries and Children answer, per file with the (size, mtime, inode)
// it was read at, newest first. A reader whose every file still matches
// its entry answers from it alone, without opening the database; any
// other rebuilds it from the database once that is in step. It is written
// whole and renamed into place, so it is always some complete snapshot,
// and each entry is checked against its file before it is believed.
const ListName = "index.list"

var snapMagic = []byte("mecha index.list 3\n")

// listPath is the snapshot's file: the index's, .list for .sqlite.
func (ix *Index) listPath() string { return strings.TrimSuffix(ix.path, ".sqlite") + ".list" }

// entry is one session of the snapshot.
type entry struct {
	name             string
	size, mtime, ino int64
	info             session.Info
	header           string // the header as written, for one List cannot rebuild from the fields
	turns            int
	stop             string
	finished, tail   bool
	sums             []string // summary records as written

	// raw is the entry's encoding past its file's name and stat, decoded
	// only when the entry is read (decode): a listing of the newest fifty
	// of 100,000 sessions decodes fifty.
	raw     []byte
	decoded bool
	dir     string
}

// snapshot is a decoded listing.
type snapshot struct {
	db uint64 // the id of the database it was made from
	// dirMtime and dirIno are the store directory's as it was read before
	// the snapshot was made (0 when it had changed too recently to tell a
	// later change by), passed the .jsonl files that were not sessions.
	dirMtime, dirIno int64
	passed           []string
	entries          []entry
	byName           map[string]int
}

// index builds byName (once; a limited listing never needs it).
func (s *snapshot) index() {
	if s.byName != nil {
		return
	}
	s.byName = make(map[string]int, len(s.entries))
	for i := range s.entries {
		s.byName[s.entries[i].name] = i
	}
}

func sortEntries(es []entry) {
	sort.Slice(es, func(i, j int) bool { return session.NewerFirst(es[i].info.Meta, es[j].info.Meta) })
}

type enc struct{ b []byte }

func (e *enc) int(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *enc) uint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) str(s string)  { e.uint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *enc) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

// encodePayload writes what the entry says past its file's stat.
func (x *entry) encodePayload(e *enc) {
	m := &x.info.Meta
	e.int(m.CreatedAt.Unix())
	e.int(int64(m.CreatedAt.Nanosecond()))
	if x.header != "" {
		e.bool(true)
		e.str(x.header)
	} else {
		e.bool(false)
		e.int(int64(m.Format))
		for _, f := range []string{m.Provider, m.Model, m.Workspace, m.Title, m.ReplayOf, m.RerunOf, m.ReflectsOn} {
			e.str(f)
		}
		e.bool(m.Distill)
		e.bool(m.Parent != nil)
		if m.Parent != nil {
			e.str(m.Parent.Session)
			e.str(m.Parent.CallID)
		}
	}
	e.str(x.info.HeaderID)
	e.int(int64(x.turns))
	e.str(x.stop)
	e.bool(x.finished)
	e.bool(x.tail)
	e.uint(uint64(len(x.sums)))
	for _, r := range x.sums {
		e.str(r)
	}
}

// encode writes the snapshot; rich headers (anything List could not
// rebuild from the plain fields) are kept as written.
func (s *snapshot) encode() []byte {
	e := &enc{b: append([]byte(nil), snapMagic...)}
	e.uint(s.db)
	e.int(s.dirMtime)
	e.int(s.dirIno)
	e.uint(uint64(len(s.passed)))
	for _, p := range s.passed {
		e.str(p)
	}
	e.uint(uint64(len(s.entries)))
	for i := range s.entries {
		x := &s.entries[i]
		e.str(x.name)
		e.int(x.size)
		e.int(x.mtime)
		e.int(x.ino)
		if !x.decoded && x.raw != nil {
			e.str(string(x.raw))
			continue
		}
		p := &enc{}
		x.encodePayload(p)
		e.str(string(p.b))
	}
	return binary.LittleEndian.AppendUint32(e.b, crc32.ChecksumIEEE(e.b))
}

type dec struct {
	b   []byte
	err bool
}

func (d *dec) uint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err, d.b = true, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) int() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err, d.b = true, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

// str returns a string sharing the snapshot's bytes, which are never
// changed once read.
func (d *dec) str() string {
	n := d.uint()
	if n > uint64(len(d.b)) {
		d.err, d.b = true, nil
		return ""
	}
	s := unsafe.String(unsafe.SliceData(d.b), int(n))
	if n == 0 {
		s = ""
	}
	d.b = d.b[n:]
	return s
}

// bytes returns a length-prefixed run of the snapshot's bytes, shared.
func (d *dec) bytes() []byte {
	n := d.uint()
	if n > uint64(len(d.b)) {
		d.err, d.b = true, nil
		return nil
	}
	b := d.b[:n:n]
	d.b = d.b[n:]
	return b
}

func (d *dec) bool() bool {
	if len(d.b) == 0 {
		d.err = true
		return false
	}
	v := d.b[0] != 0
	d.b = d.b[1:]
	return v
}

var errSnapshot = errors.New("the listing snapshot is damaged")

// decode decodes the entry's payload, once.
func (x *entry) decode() error {
	if x.decoded || x.raw == nil {
		x.decoded = true
		return nil
	}
	d := &dec{b: x.raw}
	sec, nsec := d.int(), d.int()
	m := &x.info.Meta
	if d.bool() {
		x.header = d.str()
		dm, err := transcript.DecodeMeta([]byte(x.header))
		if err != nil {
			return errSnapshot
		}
		*m = *dm
	} else {
		m.CreatedAt = time.Unix(sec, nsec).UTC()
		m.Format = int(d.int())
		m.Provider, m.Model, m.Workspace, m.Title, m.ReplayOf, m.RerunOf, m.ReflectsOn = d.str(), d.str(), d.str(), d.str(), d.str(), d.str(), d.str()
		m.Distill = d.bool()
		if d.bool() {
			m.Parent = &transcript.ParentCall{Session: d.str(), CallID: d.str()}
		}
	}
	m.ID = x.name
	x.info.Ref = session.Ref{Dir: x.dir, ID: x.name}
	x.info.HeaderID = d.str()
	x.turns = int(d.int())
	x.stop = d.str()
	x.finished, x.tail = d.bool(), d.bool()
	if k := d.uint(); k > 0 && k <= uint64(len(d.b)) {
		x.sums = make([]string, k)
		for j := range x.sums {
			x.sums[j] = d.str()
		}
	} else if k > 0 {
		return errSnapshot
	}
	if d.err || len(d.b) != 0 {
		return errSnapshot
	}
	x.decoded = true
	return nil
}

// decodeSnapshot reads a snapshot written by encode, in dir.
func decodeSnapshot(b []byte, dir string) (*snapshot, error) {
	if len(b) < len(snapMagic)+4 || string(b[:len(snapMagic)]) != string(snapMagic) {
		return nil, errSnapshot
	}
	body := b[:len(b)-4]
	if crc32.ChecksumIEEE(body) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, errSnapshot
	}
	d := &dec{b: body[len(snapMagic):]}
	s := &snapshot{db: d.uint(), dirMtime: d.int(), dirIno: d.int()}
	if k := d.uint(); k <= uint64(len(d.b)) {
		for range k {
			s.passed = append(s.passed, d.str())
		}
	} else {
		return nil, errSnapshot
	}
	n := d.uint()
	if n > uint64(len(d.b)) {
		return nil, errSnapshot
	}
	s.entries = make([]entry, n)
	for i := range s.entries {
		x := &s.entries[i]
		x.name = d.str()
		x.size, x.mtime, x.ino = d.int(), d.int(), d.int()
		x.raw = d.bytes()
		x.dir = dir
		if d.err {
			return nil, errSnapshot
		}
	}
	if d.err || len(d.b) != 0 {
		return nil, errSnapshot
	}
	return s, nil
}

// readSnapshot reads the snapshot file; nil when there is none or it is
// damaged (said once).
func (ix *Index) readSnapshot() *snapshot {
	b, err := os.ReadFile(ix.listPath())
	if err != nil {
		return nil
	}
	s, err := decodeSnapshot(b, ix.dir)
	if err != nil {
		ix.mu.Lock()
		ix.say("the session index's listing %s was damaged; rebuilding it", ix.listPath())
		ix.mu.Unlock()
		return nil
	}
	return s
}

// writeSnapshot replaces the snapshot file whole; a failure only costs
// the next reader the database.
func (ix *Index) writeSnapshot(b []byte) {
	path := ix.listPath()
	tmp := path + ".tmp" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		os.Remove(tmp)
		return
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
	}
}
