package tool

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"
)

// Secret is a configured credential: its value must never reach the model,
// the transcript or the terminal. Name says which one it was, in place of
// the value.
type Secret struct {
	Name  string
	Value string
}

// MinSecretLen is the length below which a value is not redacted: a short
// value ("1", "true", "admin") would be replaced inside ordinary text,
// destroying results while protecting nothing a guess could not find. Real
// keys and tokens are far longer.
const MinSecretLen = 8

// Redact returns t with every occurrence of a secret's value in its results,
// and in the message of an error it returns, replaced by
// "[redacted NAME]". It is the guarantee behind every other measure (the
// scrubbed environment of commands, a process its children cannot read):
// whatever route a value takes into a tool's output, a file, a command, the
// environment of another process, it is replaced before anyone sees it.
//
// Only the value as written is matched. Encoded forms (base64, URL or hex
// encoding, a value split across lines or reversed) and a value cut in two
// by a tool's own truncation are not: a model that sets out to smuggle a
// key it can read can still do it, and only the first layer stops the
// reading. Values shorter than MinSecretLen are left alone; with no secret
// to redact, t is returned as it is.
func Redact(t Tool, secrets []Secret) Tool {
	r := newRedactor(secrets)
	if r == nil {
		return t
	}
	return &redacted{Tool: t, r: r}
}

type redacted struct {
	Tool
	r *strings.Replacer
}

// Unwrap returns the tool Redact wraps.
func (t *redacted) Unwrap() Tool { return t.Tool }

// CapabilitiesOf forwards the wrapped tool's call capabilities.
func (t *redacted) CapabilitiesOf(input json.RawMessage) (Capabilities, error) {
	return CapabilitiesOf(t.Tool, input), nil
}

func (t *redacted) Run(ctx context.Context, input json.RawMessage) (Result, error) {
	res, err := t.Tool.Run(ctx, input)
	res.Content = t.r.Replace(res.Content)
	if err != nil {
		if msg := t.r.Replace(err.Error()); msg != err.Error() {
			err = &redactedError{msg: msg, err: err}
		}
	}
	return res, err
}

// redactedError is an error whose message had a secret in it. The original
// stays reachable for errors.Is and errors.As; its text is not shown.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// newRedactor builds one replacer for every secret long enough to redact,
// nil when there is none. Longer values go first, so that a secret that
// contains another is replaced whole; a value given under two names is
// shown under the first name in order.
func newRedactor(secrets []Secret) *strings.Replacer {
	var keep []Secret
	seen := map[string]bool{}
	for _, s := range secrets {
		if len(s.Value) < MinSecretLen || seen[s.Value] {
			continue
		}
		seen[s.Value] = true
		keep = append(keep, s)
	}
	if len(keep) == 0 {
		return nil
	}
	slices.SortStableFunc(keep, func(a, b Secret) int { return cmp.Compare(len(b.Value), len(a.Value)) })
	pairs := make([]string, 0, 2*len(keep))
	for _, s := range keep {
		pairs = append(pairs, s.Value, "[redacted "+s.Name+"]")
	}
	return strings.NewReplacer(pairs...)
}
