package tool

import (
	"context"
	"encoding/json"
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
// "[redacted NAME]", and so every encoded form a Redactor knows (hex,
// base64 whole or inside a longer stream, percent-encoding). It is the
// guarantee behind every other measure (the scrubbed environment of
// commands, a process its children cannot read): whatever route a value
// takes into a tool's output, a file, a command, the environment of
// another process, it is replaced before anyone sees it.
//
// Redact sees a result as the tool returns it, after the tool cut a long
// one: a secret the cut split in two is not matched here. A tool that cuts
// must redact first, with a Redactor's Writer or Reader over its whole
// output (the built-ins do, given builtin.Options.Secrets, and MCP tools,
// given mcpclient.Options.Secrets); Redact is the layer that covers every
// tool, however it was written.
//
// Other transformations (a value split across lines, as base64 wraps at 76
// columns, reversed, compressed, encrypted, or encoded otherwise) are not
// matched: a model that sets out to smuggle a key it can read can still do
// it, and only the first layer stops the reading. Values shorter than
// MinSecretLen are left alone; with no secret to redact, t is returned as
// it is.
func Redact(t Tool, secrets []Secret) Tool {
	r := NewRedactor(secrets)
	if r == nil {
		return t
	}
	return &redacted{Tool: t, r: r}
}

type redacted struct {
	Tool
	r *Redactor
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
