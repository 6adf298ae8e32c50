package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/mecha-agent/mecha/transcript"
)

var summaryNeedle = []byte(`"summary"`)

// ReadSummaries returns a transcript's header and its summary records
// without decoding anything else. Lines in the canonical layout are
// classified by their first bytes and the rest of a long line is skipped
// unread by the JSON decoder, so this runs at the speed of scanning for
// newlines. Unparseable lines are skipped, as Load skips them.
func ReadSummaries(path string) (transcript.Meta, []*transcript.Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return transcript.Meta{}, nil, fmt.Errorf("session: %w", err)
	}
	defer f.Close()
	return readSummaries(f, path)
}

func readSummaries(r io.Reader, path string) (transcript.Meta, []*transcript.Summary, error) {
	lr := newLineReader(r, 256<<10)
	first, _, err := lr.next(nil)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return transcript.Meta{}, nil, fmt.Errorf("%w: %s", ErrNotSession, path)
		}
		return transcript.Meta{}, nil, fmt.Errorf("session: %w", err)
	}
	meta, err := decodeMeta(first, path)
	if err != nil {
		return meta, nil, err
	}
	var sums []*transcript.Summary
	for {
		line, skipped, err := lr.next(mayBeSummary)
		if errors.Is(err, io.EOF) {
			return meta, sums, nil
		}
		if err != nil {
			return meta, sums, fmt.Errorf("session: read %s line %d: %w", path, lr.n, err)
		}
		if skipped || !mayBeSummary(line) {
			continue
		}
		if rec, err := transcript.Decode(line); err == nil {
			if s, ok := rec.(*transcript.Summary); ok {
				sums = append(sums, s)
			}
		}
	}
}

// mayBeSummary reports whether a line that starts with start could be a
// summary record. Canonical lines name their kind first; for any other
// layout only a line mentioning "summary" at all needs decoding.
func mayBeSummary(start []byte) bool {
	if kind, ok := transcript.PeekKind(start); ok {
		return kind == transcript.KindSummary
	}
	return bytes.Contains(start, summaryNeedle)
}
