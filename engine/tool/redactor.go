package tool

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/url"
	"slices"
	"strings"
)

// A Redactor replaces secret values, and the common encodings of each, in
// text: each by "[redacted NAME]". The forms of a value it knows are
// (encodings):
//
//   - the value as it is;
//   - hex, lower and upper case;
//   - base64, standard and URL-safe alphabets, with and without padding;
//   - inside a longer base64 stream (base64 -w0 of a file or of
//     /proc/PID/environ), where the value starts at any byte: the part of
//     the stream that encodes the value alone, for each of the three
//     alignments a value can take (0, 1 or 2 bytes before it in its group
//     of three), in both alphabets. The one or two characters at either
//     end that also encode a neighbouring byte are left: they carry a few
//     bits of the value's first and last bytes;
//   - percent-encoded, as in a query or a path, where that differs.
//
// Where forms overlap, the longest is replaced first: a secret that
// contains another is replaced whole. A nil Redactor replaces nothing.
type Redactor struct {
	pats  []pattern            // longest first
	first [256][]*pattern      // pats by first byte, longest first
	pairs [1 << 16 / 64]uint64 // the set of pats' first two bytes
}

// pattern is one form of one secret and what replaces it.
type pattern struct{ old, new string }

// NewRedactor returns the redactor of secrets, nil when none is at least
// MinSecretLen long. A form shared by two secrets (the same value under
// two names) is shown under the first name in order.
func NewRedactor(secrets []Secret) *Redactor {
	var pats []pattern
	seen := map[string]bool{}
	for _, s := range secrets {
		if len(s.Value) < MinSecretLen {
			continue
		}
		for _, f := range encodings(s.Value) {
			if !seen[f] {
				seen[f] = true
				pats = append(pats, pattern{f, "[redacted " + s.Name + "]"})
			}
		}
	}
	if len(pats) == 0 {
		return nil
	}
	slices.SortStableFunc(pats, func(a, b pattern) int { return cmp.Compare(len(b.old), len(a.old)) })
	r := &Redactor{pats: pats}
	for i := range r.pats {
		p := &r.pats[i]
		r.first[p.old[0]] = append(r.first[p.old[0]], p)
		pair := int(p.old[0])<<8 | int(p.old[1])
		r.pairs[pair/64] |= 1 << (pair % 64)
	}
	return r
}

// encodings are the forms of v a Redactor replaces (see Redactor).
func encodings(v string) []string {
	b := []byte(v)
	h := hex.EncodeToString(b)
	out := []string{v, h, strings.ToUpper(h)}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		out = append(out, enc.EncodeToString(b), enc.WithPadding(base64.NoPadding).EncodeToString(b))
		for k := range 3 {
			out = append(out, base64Middle(enc, b, k))
		}
	}
	return append(out, url.QueryEscape(v), url.PathEscape(v))
}

// base64Middle is the part of a base64 stream that encodes v alone when k
// bytes (0 to 2) precede it in its group of three: the characters from
// the first whose six bits all come from v to the last, whatever comes
// before and after v.
func base64Middle(enc *base64.Encoding, v []byte, k int) string {
	s := enc.EncodeToString(append(make([]byte, k), v...))
	return s[(8*k+5)/6 : 8*(k+len(v))/6]
}

// Replace returns s with every form of every secret replaced: from the
// left, at each place the longest form that starts there, as a
// strings.Replacer given the forms longest first would.
func (r *Redactor) Replace(s string) string {
	if r == nil {
		return s
	}
	out, _ := r.redact(nil, []byte(s), end)
	if string(out) == s {
		return s
	}
	return string(out)
}

// Writer returns a writer that writes to w what is written to it,
// redacted as Replace would redact it all at once: a secret split across
// two writes is replaced whole, so a tool can redact its output as it
// streams, before it keeps a part of it. It holds back only the bytes
// that could begin a secret until it can tell; Close or Cut writes the
// end.
func (r *Redactor) Writer(w io.Writer) *RedactWriter {
	return &RedactWriter{r: r, w: w}
}

// RedactWriter redacts a stream (see Redactor.Writer).
type RedactWriter struct {
	r   *Redactor
	w   io.Writer
	buf []byte // written, not yet decided
	out []byte
}

// scanMode is how much of the stream is still to come.
type scanMode int

const (
	more scanMode = iota // more may be written
	end                  // the stream ended
	cut                  // the stream was cut short
)

func (s *RedactWriter) Write(p []byte) (int, error) {
	if s.r == nil {
		return s.w.Write(p)
	}
	s.buf = append(s.buf, p...)
	if err := s.scan(more); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close writes what was held back, redacted: the stream ended here.
func (s *RedactWriter) Close() error {
	if s.r == nil {
		return nil
	}
	return s.scan(end)
}

// Cut ends a stream that was cut short (a read limit): what was held back
// is written, redacted, up to where the rest could be the beginning of a
// secret, which is dropped, so that no fragment of a secret cut there
// remains.
func (s *RedactWriter) Cut() error {
	if s.r == nil {
		return nil
	}
	return s.scan(cut)
}

// scan decides what it can of s.buf and writes it.
func (s *RedactWriter) scan(mode scanMode) error {
	var n int
	s.out, n = s.r.redact(s.out[:0], s.buf, mode)
	s.buf = append(s.buf[:0], s.buf[n:]...)
	if len(s.out) == 0 {
		return nil
	}
	_, err := s.w.Write(s.out)
	return err
}

// redact appends src to dst with every form replaced, as far as mode lets
// it decide, and returns how much of src it consumed: all of it, but with
// more to come, not from where the rest could begin a form (to be scanned
// again with what follows); with the stream cut, that rest is dropped.
func (r *Redactor) redact(dst, src []byte, mode scanMode) ([]byte, int) {
	i, run := 0, 0
	consumed := len(src)
scan:
	for i < len(src) {
		if i+1 < len(src) && !r.startsPair(src[i], src[i+1]) {
			i++
			continue
		}
		cands := r.first[src[i]]
		if len(cands) == 0 {
			i++
			continue
		}
		if mode != end && partial(cands, src[i:]) {
			if mode == more {
				consumed = i // undecided until more is written
			}
			break // cut: drop what could begin a secret
		}
		for _, p := range cands {
			if len(p.old) <= len(src)-i && string(src[i:i+len(p.old)]) == p.old {
				dst = append(dst, src[run:i]...)
				dst = append(dst, p.new...)
				i += len(p.old)
				run = i
				continue scan
			}
		}
		i++
	}
	return append(dst, src[run:i]...), consumed
}

// startsPair reports whether a pattern starts with a then b.
func (r *Redactor) startsPair(a, b byte) bool {
	pair := int(a)<<8 | int(b)
	return r.pairs[pair/64]&(1<<(pair%64)) != 0
}

// partial reports whether tail is the beginning of a pattern longer than
// it, one that more bytes could complete.
func partial(cands []*pattern, tail []byte) bool {
	for _, p := range cands {
		if len(p.old) > len(tail) && strings.HasPrefix(p.old, string(tail)) {
			return true
		}
	}
	return false
}

// Reader returns a reader of src redacted as Replace would redact it all
// at once (see Writer); a read error other than io.EOF ends it as a cut.
func (r *Redactor) Reader(src io.Reader) io.Reader {
	if r == nil {
		return src
	}
	rr := &redactReader{src: src}
	rr.w = r.Writer(&rr.out)
	return rr
}

type redactReader struct {
	src   io.Reader
	w     *RedactWriter
	out   bytes.Buffer
	chunk []byte
	err   error // the source's, once it ended
}

func (r *redactReader) Read(p []byte) (int, error) {
	for r.out.Len() == 0 && r.err == nil {
		if r.chunk == nil {
			r.chunk = make([]byte, 32<<10)
		}
		n, err := r.src.Read(r.chunk)
		if n > 0 {
			_, _ = r.w.Write(r.chunk[:n])
		}
		switch {
		case err == io.EOF:
			_ = r.w.Close()
			r.err = err
		case err != nil:
			_ = r.w.Cut()
			r.err = err
		}
	}
	if r.out.Len() > 0 {
		return r.out.Read(p)
	}
	return 0, r.err
}
