package wire

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

var errRead = errors.New("connection reset")

// failingReader returns s, then err in place of io.EOF.
type failingReader struct {
	r   io.Reader
	err error
}

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		err = f.err
	}
	return n, err
}

// stream returns a reader of s that ends with err, or with io.EOF when err
// is nil.
func stream(s string, err error) io.Reader {
	if err == nil {
		return strings.NewReader(s)
	}
	return &failingReader{r: strings.NewReader(s), err: err}
}

// drain calls next until it fails and returns what it returned before, and
// with, the failure.
func drain[T any](next func() (T, error)) (before []T, last T, err error) {
	for {
		v, err := next()
		if err != nil {
			return before, v, err
		}
		before = append(before, v)
	}
}

func TestNext(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		stream  string
		readErr error
		want    []string // each event as name=data, data quoted, "<nil>" for nil data
		wantErr error
	}{
		{"one event", "event: a\ndata: x\n\n", nil, []string{`a="x"`}, io.EOF},
		{"no name", "data: x\n\n", nil, []string{`="x"`}, io.EOF},
		{"multi-line data", "data: {\"a\":\ndata: 1}\n\n", nil, []string{"=\"{\\\"a\\\":\\n1}\""}, io.EOF},
		{"CRLF", "event: a\r\ndata: x\r\n\r\nevent: b\r\ndata: y\r\n\r\n", nil, []string{`a="x"`, `b="y"`}, io.EOF},
		{"comments and other fields", ": hi\nid: 7\nretry: 10\nevent: a\n: mid\ndata: x\n\n", nil, []string{`a="x"`}, io.EOF},
		{"a comment alone is no event", ": keepalive\n\n: again\n\ndata: x\n\n", nil, []string{`="x"`}, io.EOF},
		{"blank lines before an event", "\n\n\r\n\ndata: x\n\n", nil, []string{`="x"`}, io.EOF},
		{"one space dropped, not two", "data:x\n\ndata:  x\n\n", nil, []string{`="x"`, `=" x"`}, io.EOF},
		{"field without colon", "event\ndata\n\n", nil, []string{`=<nil>`}, io.EOF},
		{"name without data", "event: ping\n\n", nil, []string{`ping=<nil>`}, io.EOF},
		{"an empty first data line adds no newline", "data:\ndata: x\n\n", nil, []string{`="x"`}, io.EOF},
		{"empty data later does", "data: x\ndata:\n\n", nil, []string{`="x\n"`}, io.EOF},
		{"last event without blank line is discarded", "data: x\n\ndata: y\n", nil, []string{`="x"`}, io.EOF},
		{"last line cut short", "data: x\n\ndata: y", nil, []string{`="x"`}, ErrTruncated},
		{"empty stream", "", nil, nil, io.EOF},
		{"read error", "data: x\n\ndata: y\n", errRead, []string{`="x"`}, errRead},
		{"read error mid-line", "data: x\n\ndata: y", errRead, []string{`="x"`}, errRead},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			events, last, err := drain(NewReader(stream(tt.stream, tt.readErr)).Next)
			if err != tt.wantErr {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if last.Name != "" || last.Data != nil {
				t.Errorf("event %+v returned with the error", last)
			}
			var got []string
			for _, ev := range events {
				data := "<nil>"
				if ev.Data != nil {
					data = fmt.Sprintf("%q", ev.Data)
				}
				got = append(got, ev.Name+"="+data)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("events\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestNextData(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		stream  string
		readErr error
		want    []string // the data values read without error
		last    string   // the data returned with the error
		wantErr error
	}{
		{"one per line", "data: a\n\ndata: b\n\n", nil, []string{"a", "b"}, "", io.EOF},
		{"lines not joined", "data: a\ndata: b\n", nil, []string{"a", "b"}, "", io.EOF},
		{"other lines skipped", ": hi\nevent: x\nid: 1\n\ndata: a\n\n", nil, []string{"a"}, "", io.EOF},
		{"CRLF and white space trimmed", "data:  a \t\r\n\r\n  data:b\r\n", nil, []string{"a", "b"}, "", io.EOF},
		{"empty data kept", "data:\n\ndata: \n", nil, []string{"", ""}, "", io.EOF},
		{"not a data field", "datum: a\ndata x\n data : b\n", nil, nil, "", io.EOF},
		{"[DONE] without newline", "data: a\n\ndata: [DONE]", nil, []string{"a"}, "[DONE]", ErrTruncated},
		{"data line cut short", "data: a\n\ndata: {\"x\"", nil, []string{"a"}, `{"x"`, ErrTruncated},
		{"other line cut short", "data: a\n\n: bye", nil, []string{"a"}, "", ErrTruncated},
		{"a lone CR cut short", "data: a\n\r", nil, []string{"a"}, "", ErrTruncated},
		{"read error mid-line", "data: a\ndata: [DO", errRead, []string{"a"}, "[DO", errRead},
		{"read error at a line end", "data: a\n", errRead, []string{"a"}, "", errRead},
		{"empty stream", "", nil, nil, "", io.EOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			values, last, err := drain(NewReader(stream(tt.stream, tt.readErr)).NextData)
			if err != tt.wantErr {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if string(last) != tt.last {
				t.Errorf("data with the error = %q, want %q", last, tt.last)
			}
			var got []string
			for _, v := range values {
				got = append(got, string(v))
			}
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tt.want) {
				t.Errorf("data\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestErrTruncatedIsEOF(t *testing.T) {
	t.Parallel()
	if !errors.Is(ErrTruncated, io.EOF) {
		t.Error("ErrTruncated is not an io.EOF")
	}
	if !strings.HasPrefix(ErrTruncated.Error(), "wire: ") {
		t.Errorf("ErrTruncated = %q, want the package prefix", ErrTruncated)
	}
}
