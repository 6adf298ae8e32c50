package sessionindex

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"syscall"
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
//
// Its layout lets a reader take only what it needs: a header (the
// database it was made from, the store directory's mtime, the files
// passed over, and the length of each block), then the entries in blocks
// of blockEntries, newest first, then every entry's summaries in one
// section; each part carries its own CRC-32. A listing of the newest
// fifty reads the header and the first block; a whole listing reads the
// blocks and leaves the summaries, which only stats reads.
const ListName = "index.list"

// snapMagic starts the file; the digit is the layout's version. A file
// of another version is passed over quietly and rebuilt.
var (
	snapMagic  = []byte("mecha index.list 5\n")
	snapFamily = []byte("mecha index.list ")
)

// blockEntries is how many entries a block of the snapshot holds.
const blockEntries = 128

// listPath is the snapshot's file: the index's, .list for .sqlite.
func (ix *Index) listPath() string { return strings.TrimSuffix(ix.path, ".sqlite") + ".list" }

// entry is one session of the snapshot: its file's name and stat as
// indexed, and the rest encoded (raw, decoded only when the entry is
// read: a listing of the newest fifty of 100,000 sessions decodes fifty).
type entry struct {
	name             string
	size, mtime, ino int64
	raw              []byte // see encodePayload
	sums             []byte // see encodeSums; nil until the section is read
}

// snapshot is a listing as read from the file.
type snapshot struct {
	db uint64 // the id of the database it was made from
	// dirMtime and dirIno are the store directory's as it was read before
	// the snapshot was made (0 when it had changed too recently to tell a
	// later change by), passed the .jsonl files that were not sessions.
	dirMtime, dirIno int64
	passed           []string
	entries          []entry
	// total is the number of entries the file holds; entries may hold
	// fewer (the newest) when only a prefix was read.
	total    int
	withSums bool
	byName   map[string]int
}

// complete says every entry was read.
func (s *snapshot) complete() bool { return len(s.entries) == s.total }

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

// when returns the creation time the entry's payload starts with, for
// sorting.
func (x *entry) when() (sec, nsec int64) {
	d := &dec{b: x.raw}
	return d.int(), d.int()
}

// sortEntries sorts newest first, as the store's listings do: by creation
// instant, then by id (the file's name) descending.
func sortEntries(es []entry) {
	type key struct{ sec, nsec int64 }
	keys := make(map[string]key, len(es))
	for i := range es {
		s, n := es[i].when()
		keys[es[i].name] = key{s, n}
	}
	sort.Slice(es, func(i, j int) bool {
		a, b := keys[es[i].name], keys[es[j].name]
		if a != b {
			return a.sec > b.sec || a.sec == b.sec && a.nsec > b.nsec
		}
		return es[i].name > es[j].name
	})
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

// listed is what an entry says past its file's stat, decoded.
type listed struct {
	info           session.Info
	header         string // the header as written, for one the plain fields cannot rebuild
	turns          int
	stop           string
	finished, tail bool
}

// encodePayload encodes what an entry says past its file's stat; rich
// headers (anything List could not rebuild from the plain fields) are
// kept as written.
func encodePayload(l *listed) []byte {
	e := &enc{}
	m := &l.info.Meta
	e.int(m.CreatedAt.Unix())
	e.int(int64(m.CreatedAt.Nanosecond()))
	if l.header != "" {
		e.bool(true)
		e.str(l.header)
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
	e.str(l.info.HeaderID)
	e.int(int64(l.turns))
	e.str(l.stop)
	e.bool(l.finished)
	e.bool(l.tail)
	return e.b
}

// plainHeader reports whether the plain fields an entry keeps (those
// encodePayload writes, and the sessions table's columns) give m back
// whole, the ID aside (a listing's is the file's name); a header with any
// other field set (a fork's origin, an MCP client, an import, a time of
// its own, a zone other than UTC) is kept as written. It compares the whole
// Meta, so that a field added to the header later is kept too, not lost.
func plainHeader(m *transcript.Meta) bool {
	if m.CreatedAt.Location() != time.UTC {
		return false
	}
	plain := transcript.Meta{Format: m.Format, ID: m.ID, CreatedAt: m.CreatedAt, Provider: m.Provider, Model: m.Model,
		Workspace: m.Workspace, Title: m.Title, ReplayOf: m.ReplayOf, RerunOf: m.RerunOf, ReflectsOn: m.ReflectsOn,
		Distill: m.Distill, Parent: m.Parent}
	return reflect.DeepEqual(plain, *m)
}

// totals decodes the entry into t (its Info and totals), sharing the
// snapshot's bytes for its strings.
func (x *entry) totals(dir string, t *session.Totals) error {
	*t = session.Totals{}
	d := &dec{b: x.raw}
	sec, nsec := d.int(), d.int()
	m := &t.Meta
	if d.bool() {
		dm, err := transcript.DecodeMeta(d.bytes())
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
	t.Ref = session.Ref{Dir: dir, ID: x.name}
	t.HeaderID = d.str()
	t.Turns = int(d.int())
	t.Stop = d.str()
	t.Finished, t.Tail = d.bool(), d.bool()
	if d.err || len(d.b) != 0 {
		return errSnapshot
	}
	return nil
}

// encodeSums encodes a session's summary records as written: each one
// in binary when that gives back exactly what decoding the record gives,
// else as written.
func encodeSums(recs []string) []byte {
	e := &enc{}
	e.uint(uint64(len(recs)))
	for _, r := range recs {
		if b, ok := binarySummary(r); ok {
			e.bool(true)
			e.str(string(b))
		} else {
			e.bool(false)
			e.str(r)
		}
	}
	return e.b
}

// binarySummary encodes the summary record r in binary, when decoding
// that gives a Summary equal to the one decoding r gives (a time in a
// zone other than UTC, say, is kept as written).
func binarySummary(r string) ([]byte, bool) {
	rec, err := transcript.Decode([]byte(r))
	if err != nil {
		return nil, false
	}
	s, ok := rec.(*transcript.Summary)
	if !ok {
		return nil, false
	}
	e := &enc{}
	e.uint(s.Usage.InputTokens)
	e.uint(s.Usage.OutputTokens)
	e.uint(s.Usage.CacheReadTokens)
	e.uint(s.Usage.CacheWriteTokens)
	e.int(int64(s.Turns))
	e.str(s.Provider)
	e.str(s.Model)
	e.str(s.StopReason)
	e.str(s.Error)
	e.bool(!s.At.IsZero())
	if !s.At.IsZero() {
		if s.At.Location() != time.UTC {
			return nil, false
		}
		e.int(s.At.Unix())
		e.int(int64(s.At.Nanosecond()))
	}
	e.uint(s.ContextTokens)
	e.bool(s.SessionTurns != nil)
	if s.SessionTurns != nil {
		e.int(int64(*s.SessionTurns))
	}
	back, err := decodeBinarySummary(e.b)
	if err != nil || !reflect.DeepEqual(back, s) {
		return nil, false
	}
	return e.b, true
}

func decodeBinarySummary(b []byte) (*transcript.Summary, error) {
	d := &dec{b: b}
	s := &transcript.Summary{}
	s.Usage.InputTokens, s.Usage.OutputTokens, s.Usage.CacheReadTokens, s.Usage.CacheWriteTokens = d.uint(), d.uint(), d.uint(), d.uint()
	s.Turns = int(d.int())
	s.Provider, s.Model, s.StopReason, s.Error = d.str(), d.str(), d.str(), d.str()
	if d.bool() {
		sec, nsec := d.int(), d.int()
		s.At = time.Unix(sec, nsec).UTC()
	}
	s.ContextTokens = d.uint()
	if d.bool() {
		t := int(d.int())
		s.SessionTurns = &t
	}
	if d.err || len(d.b) != 0 {
		return nil, errSnapshot
	}
	return s, nil
}

// summaries decodes the entry's summaries; its sums must have been read.
func (x *entry) summaries() ([]*transcript.Summary, error) {
	d := &dec{b: x.sums}
	k := d.uint()
	if k > uint64(len(d.b)) {
		return nil, errSnapshot
	}
	var out []*transcript.Summary
	if k > 0 {
		out = make([]*transcript.Summary, 0, k)
	}
	for range k {
		bin := d.bool()
		b := d.bytes()
		if d.err {
			return nil, errSnapshot
		}
		if bin {
			s, err := decodeBinarySummary(b)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
			continue
		}
		if rec, err := transcript.Decode(b); err == nil {
			if s, ok := rec.(*transcript.Summary); ok {
				out = append(out, s)
			}
		}
	}
	if len(d.b) != 0 {
		return nil, errSnapshot
	}
	return out, nil
}

// encode writes the snapshot; every entry must have its sums.
func (s *snapshot) encode() []byte {
	var blocks [][]byte
	for i := 0; i < len(s.entries); i += blockEntries {
		e := &enc{}
		for j := i; j < min(i+blockEntries, len(s.entries)); j++ {
			x := &s.entries[j]
			e.str(x.name)
			e.int(x.size)
			e.int(x.mtime)
			e.int(x.ino)
			e.str(string(x.raw))
		}
		blocks = append(blocks, e.b)
	}
	sums := &enc{}
	for i := range s.entries {
		sums.str(string(s.entries[i].sums))
	}
	h := &enc{}
	h.uint(s.db)
	h.int(s.dirMtime)
	h.int(s.dirIno)
	h.uint(uint64(len(s.passed)))
	for _, p := range s.passed {
		h.str(p)
	}
	h.uint(uint64(len(s.entries)))
	h.uint(uint64(len(blocks)))
	for _, b := range blocks {
		h.uint(uint64(len(b)))
	}
	h.uint(uint64(len(sums.b)))
	out := append([]byte(nil), snapMagic...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(h.b)))
	for _, part := range append(append([][]byte{h.b}, blocks...), sums.b) {
		out = append(out, part...)
		out = binary.LittleEndian.AppendUint32(out, crc32.ChecksumIEEE(part))
	}
	return out
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
	b := d.bytes()
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
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

var (
	errSnapshot = errors.New("the listing snapshot is damaged")
	// errShort says the bytes read end before the part asked for.
	errShort = errors.New("the listing snapshot was read in part")
	// errVersion says the file is a snapshot of another layout.
	errVersion = errors.New("a listing snapshot of another version")
)

// layout is where the parts of a snapshot file are.
type layout struct {
	headerEnd int   // the offset past the header's CRC
	blocks    []int // each block's length, without its CRC
	sumsLen   int
}

// end is the offset past the last block's CRC.
func (l *layout) end() int {
	n := l.headerEnd
	for _, b := range l.blocks {
		n += b + 4
	}
	return n
}

// part checks and returns the part of b at off, n bytes and a CRC.
func part(b []byte, off, n int) ([]byte, error) {
	if off+n+4 > len(b) {
		return nil, errShort
	}
	p := b[off : off+n : off+n]
	if crc32.ChecksumIEEE(p) != binary.LittleEndian.Uint32(b[off+n:]) {
		return nil, errSnapshot
	}
	return p, nil
}

// decodeHeader reads the snapshot's header from b, the file or its start.
func decodeHeader(b []byte) (*snapshot, *layout, error) {
	if !bytes.HasPrefix(b, snapMagic) {
		if bytes.HasPrefix(b, snapFamily) && bytes.IndexByte(b[len(snapFamily):min(len(b), len(snapFamily)+8)], '\n') >= 0 {
			return nil, nil, errVersion
		}
		if len(b) < len(snapMagic) && bytes.HasPrefix(snapMagic, b) {
			return nil, nil, errShort
		}
		return nil, nil, errSnapshot
	}
	off := len(snapMagic)
	if len(b) < off+4 {
		return nil, nil, errShort
	}
	n := int(binary.LittleEndian.Uint32(b[off:]))
	off += 4
	h, err := part(b, off, n)
	if err != nil {
		return nil, nil, err
	}
	d := &dec{b: h}
	s := &snapshot{db: d.uint(), dirMtime: d.int(), dirIno: d.int()}
	k := d.uint()
	if k > uint64(len(d.b)) {
		return nil, nil, errSnapshot
	}
	for range k {
		s.passed = append(s.passed, d.str())
	}
	total, nb := d.uint(), d.uint()
	if nb > uint64(len(d.b)) || total > nb*blockEntries {
		return nil, nil, errSnapshot
	}
	s.total = int(total)
	l := &layout{headerEnd: off + n + 4, blocks: make([]int, nb)}
	for i := range l.blocks {
		l.blocks[i] = int(d.uint())
	}
	l.sumsLen = int(d.uint())
	if d.err || len(d.b) != 0 {
		return nil, nil, errSnapshot
	}
	return s, l, nil
}

// decodeBlocks reads the entries of the blocks b holds, in dir, until
// want entries are read (want < 0: all); errShort when b ends first.
// each (when not nil) is given each block's entries once decoded.
func (s *snapshot) decodeBlocks(b []byte, l *layout, want int, each func([]entry)) error {
	off := l.headerEnd
	s.entries = make([]entry, 0, min(s.total, max(want, 0)+blockEntries, s.total))
	if want < 0 {
		s.entries = make([]entry, 0, s.total)
	}
	for _, n := range l.blocks {
		if want >= 0 && len(s.entries) >= want {
			return nil
		}
		p, err := part(b, off, n)
		if err != nil {
			return err
		}
		off += n + 4
		d := &dec{b: p}
		from := len(s.entries)
		for len(d.b) > 0 {
			var x entry
			x.name = d.str()
			x.size, x.mtime, x.ino = d.int(), d.int(), d.int()
			x.raw = d.bytes()
			if d.err || len(s.entries) == s.total {
				return errSnapshot
			}
			s.entries = append(s.entries, x)
		}
		if each != nil {
			each(s.entries[from:len(s.entries):len(s.entries)])
		}
	}
	if len(s.entries) != s.total {
		return errSnapshot
	}
	return nil
}

// decodeSums reads the summaries section of b into the entries.
func (s *snapshot) decodeSums(b []byte, l *layout) error {
	p, err := part(b, l.end(), l.sumsLen)
	if err != nil {
		return err
	}
	d := &dec{b: p}
	for i := range s.entries {
		s.entries[i].sums = d.bytes()
	}
	if d.err || len(d.b) != 0 {
		return errSnapshot
	}
	s.withSums = true
	return nil
}

// What of the snapshot a reader reads.
const (
	readHead    = iota // the header and the first blocks
	readEntries        // every entry, not the summaries
	readAll            // every entry and its summaries
)

// headBytes is how much a readHead reads: the header and a block or two
// of a usual store.
const headBytes = 64 << 10

// readSnapshot reads the snapshot file; nil when there is none or it is
// damaged (said once) or of another version. With readHead it reads at
// least want entries when the file has them (fewer when the file has
// fewer); with readEntries, all; with readAll, all with their summaries.
func (ix *Index) readSnapshot(what, want int) *snapshot {
	return ix.readSnapshotThen(what, want, nil)
}

// readHooks are what a reader does while the snapshot is read; each may
// be nil.
type readHooks struct {
	// opened is called as soon as the file is open, before it is read.
	// The snapshot read is the one the file held at that moment, and a
	// snapshot is written only once the database it was made from was
	// committed: whatever reads the database after opened was called
	// reads it at least that far along.
	opened func()
	// blocks is called once the header is read, when every entry is to be
	// read: the function it returns (nil: none) is given each block's
	// entries as they are decoded, before the snapshot is whole (it may
	// turn out damaged after).
	blocks func(s *snapshot) func([]entry)
}

// readSnapshotThen is readSnapshot with hooks (h may be nil).
func (ix *Index) readSnapshotThen(what, want int, h *readHooks) *snapshot {
	if h == nil {
		h = &readHooks{}
	}
	s, err := ix.loadSnapshot(what, want, h)
	if err != nil {
		if errors.Is(err, errSnapshot) {
			ix.mu.Lock()
			ix.say("the session index's listing %s was damaged; rebuilding it", ix.listPath())
			ix.mu.Unlock()
		}
		return nil
	}
	return s
}

func (ix *Index) loadSnapshot(what, want int, h *readHooks) (*snapshot, error) {
	fd, err := syscall.Open(ix.listPath(), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	if h.opened != nil {
		h.opened()
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, err
	}
	size := int(st.Size)
	var b []byte
	// readTo makes b the file's first n bytes, reading only those it
	// does not hold yet.
	readTo := func(n int) error {
		if n <= len(b) {
			return nil
		}
		nb := make([]byte, n)
		copy(nb, b)
		if err := preadFull(fd, nb[len(b):], int64(len(b))); err != nil {
			return errSnapshot
		}
		b = nb
		return nil
	}
	// A listing reads the header and then as far as it needs: the first
	// blocks, all of them, or the summaries too.
	first := size
	if what != readAll {
		first = min(size, headBytes)
	}
	if err := readTo(first); err != nil {
		return nil, err
	}
	s, l, err := decodeHeader(b)
	if errors.Is(err, errShort) && len(b) < size {
		if err = readTo(size); err == nil {
			s, l, err = decodeHeader(b)
		}
	}
	if err != nil {
		return nil, shortIsDamage(err)
	}
	if l.end()+l.sumsLen+4 != size {
		return nil, errSnapshot
	}
	if what != readHead {
		want = -1
	}
	var each func([]entry)
	if what != readHead {
		if err := readTo(l.end()); err != nil {
			return nil, err
		}
		if h.blocks != nil {
			each = h.blocks(s)
		}
	}
	err = s.decodeBlocks(b, l, want, each)
	if errors.Is(err, errShort) && len(b) < size && what == readHead {
		if err = readTo(size); err == nil {
			err = s.decodeBlocks(b, l, want, nil)
		}
	}
	if err == nil && what == readAll {
		err = s.decodeSums(b, l)
	}
	if err != nil {
		return nil, shortIsDamage(err)
	}
	return s, nil
}

func shortIsDamage(err error) error {
	if errors.Is(err, errShort) {
		return errSnapshot
	}
	return err
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
