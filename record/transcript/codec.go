package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ErrNotObject is returned by Decode for a line that is not a JSON object
// with a "record" field.
var ErrNotObject = errors.New("transcript: line is not a record object")

type (
	metaAlias    Meta
	configAlias  Config
	taintAlias   Taint
	summaryAlias Summary
	compactAlias Compaction
	callAlias    ToolCall
	startAlias   ToolCallStart
)

// Encode returns the record as one line of JSON ending in a newline, with
// the "record" field first. The line never contains another newline.
func Encode(r Record) ([]byte, error) {
	var buf bytes.Buffer
	if err := AppendEncode(&buf, r); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// AppendEncode writes the line Encode would return to buf, so that a writer
// can reuse one buffer for every record.
func AppendEncode(buf *bytes.Buffer, r Record) error {
	var v any
	switch r := r.(type) {
	case *Meta:
		if r.ID == "" {
			return errors.New("transcript: meta record has no id")
		}
		v = struct {
			Record string `json:"record"`
			*metaAlias
		}{KindMeta, (*metaAlias)(r)}
	case *Config:
		if len(r.Nulls) > 0 {
			return appendConfigNulls(buf, r)
		}
		v = struct {
			Record string `json:"record"`
			*configAlias
		}{KindConfig, (*configAlias)(r)}
	case *Message:
		if r.Role == "" {
			return errors.New("transcript: message record has no role")
		}
		content := make([]any, len(r.Content))
		for i, b := range r.Content {
			w, err := b.wire()
			if err != nil {
				return err
			}
			content[i] = w
		}
		v = struct {
			Record     string    `json:"record"`
			Role       string    `json:"role"`
			Content    []any     `json:"content"`
			StopReason string    `json:"stop_reason,omitempty"`
			At         time.Time `json:"at,omitzero"`
		}{KindMessage, r.Role, content, r.StopReason, r.At}
	case *Taint:
		v = struct {
			Record string `json:"record"`
			*taintAlias
		}{KindTaint, (*taintAlias)(r)}
	case *Summary:
		v = struct {
			Record string `json:"record"`
			*summaryAlias
		}{KindSummary, (*summaryAlias)(r)}
	case *Compaction:
		if r.Replaces < 0 {
			return errors.New("transcript: compaction replaces a negative number of messages")
		}
		v = struct {
			Record string `json:"record"`
			*compactAlias
		}{KindCompaction, (*compactAlias)(r)}
	case *ToolCall:
		if r.Tool == "" {
			return errors.New("transcript: tool_call record has no tool")
		}
		v = struct {
			Record string `json:"record"`
			*callAlias
		}{KindToolCall, (*callAlias)(r)}
	case *ToolCallStart:
		if r.Tool == "" {
			return errors.New("transcript: tool_call_start record has no tool")
		}
		v = struct {
			Record string `json:"record"`
			*startAlias
		}{KindToolCallStart, (*startAlias)(r)}
	case *Unknown:
		if err := json.Compact(buf, r.Raw); err != nil {
			return fmt.Errorf("transcript: unknown record %q: %w", r.Record, err)
		}
		buf.WriteByte('\n')
		return nil
	case nil:
		return errors.New("transcript: nil record")
	default:
		return fmt.Errorf("transcript: cannot encode %T", r)
	}
	start := buf.Len()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		buf.Truncate(start)
		return fmt.Errorf("transcript: encode %s: %w", r.Kind(), err)
	}
	return nil // Encode ends the value with the newline
}

// marshal is json.Marshal without escaping <, > and &, so transcripts stay
// readable with grep; the result is still valid JSON on one line.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

var recordPrefix = []byte(`{"record":"`)

// PeekKind returns the "record" field of a line cheaply when the line was
// written in the canonical field order, and ok=false otherwise (the caller
// must then decode the line to know).
func PeekKind(line []byte) (kind string, ok bool) {
	line = bytes.TrimLeft(line, " \t")
	if !bytes.HasPrefix(line, recordPrefix) {
		return "", false
	}
	rest := line[len(recordPrefix):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 || bytes.IndexByte(rest[:end], '\\') >= 0 {
		return "", false
	}
	return string(rest[:end]), true
}

// Decode parses one line (with or without its newline). Fields it does not
// know are ignored; a record kind it does not know comes back as *Unknown.
func Decode(line []byte) (Record, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return nil, ErrNotObject
	}
	kind, ok := PeekKind(line)
	if !ok {
		var probe struct {
			Record *string `json:"record"`
		}
		if err := json.Unmarshal(line, &probe); err != nil {
			return nil, fmt.Errorf("transcript: %w", err)
		}
		if probe.Record == nil {
			return nil, ErrNotObject
		}
		kind = *probe.Record
	}
	var (
		r   Record
		err error
	)
	switch kind {
	case KindMeta:
		m := new(Meta)
		if err = json.Unmarshal(line, (*metaAlias)(m)); err == nil && m.ID == "" {
			err = errors.New("meta record has no id")
		}
		r = m
	case KindConfig:
		c := new(Config)
		if err = json.Unmarshal(line, (*configAlias)(c)); err == nil && bytes.Contains(line, nullLiteral) {
			c.Nulls = configNulls(line)
		}
		r = c
	case KindMessage:
		r, err = decodeMessage(line)
	case KindTaint:
		t := new(Taint)
		err = json.Unmarshal(line, (*taintAlias)(t))
		r = t
	case KindSummary:
		s := new(Summary)
		err = json.Unmarshal(line, (*summaryAlias)(s))
		r = s
	case KindCompaction:
		c := new(Compaction)
		if err = json.Unmarshal(line, (*compactAlias)(c)); err == nil && c.Replaces < 0 {
			err = errors.New("negative replaces")
		}
		r = c
	case KindToolCall:
		c := new(ToolCall)
		if err = json.Unmarshal(line, (*callAlias)(c)); err == nil && c.Tool == "" {
			err = errors.New("no tool")
		}
		r = c
	case KindToolCallStart:
		c := new(ToolCallStart)
		if err = json.Unmarshal(line, (*startAlias)(c)); err == nil && c.Tool == "" {
			err = errors.New("no tool")
		}
		r = c
	default:
		var at struct {
			At time.Time `json:"at"`
		}
		if err = json.Unmarshal(line, &at); err != nil {
			// "at" of an unexpected type in a record we do not know is not our
			// concern; keep the record as long as it is valid JSON.
			if json.Valid(line) {
				err, at.At = nil, time.Time{}
			}
		}
		r = &Unknown{Record: kind, Raw: append(json.RawMessage(nil), line...), At: at.At}
	}
	if err != nil {
		return nil, fmt.Errorf("transcript: %s record: %w", kind, err)
	}
	return r, nil
}
