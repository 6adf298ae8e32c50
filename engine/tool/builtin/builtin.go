package builtin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"time"

	"github.com/mecha-agent/mecha/engine/sandbox"

	"github.com/mecha-agent/mecha/engine/tool"
)

// Tool names, in the order All returns the tools.
const (
	NameFSRead   = "fs_read"
	NameFSList   = "fs_list"
	NameFSWrite  = "fs_write"
	NameFSEdit   = "fs_edit"
	NameFSGrep   = "fs_grep"
	NameFSGlob   = "fs_glob"
	NameShell    = "shell"
	NameWebFetch = "web_fetch"
)

// Defaults for the zero values of Options.
const (
	DefaultMaxResultBytes  = 64 << 10
	DefaultShellTimeout    = 120 * time.Second
	DefaultMaxShellTimeout = 10 * time.Minute
	DefaultShell           = "/bin/sh"
)

// Options tune the built-in tools. The zero value is usable: every zero
// field takes its default.
type Options struct {
	// Keep, when set, stores a file's content before fs_write or fs_edit
	// replaces it (the blob store) and returns its name, the SHA-256 the
	// call's result names (tool.Result.Files); a call whose content
	// cannot be kept does not write. Nil: nothing is kept or named.
	Keep func(content []byte) (string, error)
	// MaxResultBytes bounds the content of a result (about: truncation
	// markers and status lines come on top). Default DefaultMaxResultBytes.
	MaxResultBytes int
	// ShellTimeout is the shell timeout when a call does not set
	// timeout_seconds. Default DefaultShellTimeout.
	ShellTimeout time.Duration
	// MaxShellTimeout caps the timeout_seconds of a call. Default
	// DefaultMaxShellTimeout, raised to ShellTimeout if that is larger.
	MaxShellTimeout time.Duration
	// Shell is the program run as `Shell -c command`. Default DefaultShell.
	Shell string
	// Env is the environment of shell commands; nil means os.Environ().
	Env []string
	// Secrets are replaced in what the tools read (a command's output, a
	// file, a fetched body), every encoded form a tool.Redactor knows
	// included, before any of it is cut to MaxResultBytes, so no cut
	// leaves a fragment of a secret (see tool.Redactor). The tool.Redact
	// decorator still covers the whole result.
	Secrets []tool.Secret
	// KillGrace is how long the shell tool waits, after the process group
	// was killed, for output from processes that left the group (setsid)
	// before it stops reading. Default 2s.
	KillGrace time.Duration
	// Sandbox confines shell commands (see package sandbox); the zero
	// value leaves them unconfined. It must be what is actually enforced
	// (sandbox.Resolve): the shell's capabilities are computed from it.
	Sandbox sandbox.Setting
	// ReadDeny are the paths a confined command may not read (see
	// sandbox.View.Deny).
	ReadDeny []string
	// AllowDomains are the hosts a command may reach through the egress
	// proxy when Sandbox has Egress (see egress.Egress); EgressSends says
	// one of them is marked as able to receive data, which makes the
	// shell able to send data out.
	AllowDomains []string
	EgressSends  bool
	// Self is mecha's executable and SelfName the name it is started
	// under; a confined command runs through it as the sandbox helper.
	Self, SelfName string
	// UntrustedWorkspace says the workspace is not trusted (harness:
	// trusted_workspaces): the tools that read it declare
	// tool.Capabilities.UntrustedWorkspace, so what they bring in counts
	// as untrusted as well as private.
	UntrustedWorkspace bool

	// FetchTimeout bounds a whole web_fetch call, the body included.
	// Default DefaultFetchTimeout.
	FetchTimeout time.Duration
	// MaxFetchBytes is how much of a body web_fetch reads; the rest is cut.
	// Default DefaultMaxFetchBytes.
	MaxFetchBytes int
	// MaxRedirects is how many redirects web_fetch follows. Default
	// DefaultMaxRedirects; negative follows none.
	MaxRedirects int
	// Resolver resolves host names for web_fetch; nil means the system's.
	Resolver Resolver
	// RefusePrivate makes web_fetch refuse private addresses as well as
	// link-local and metadata ones: loopback, RFC 1918, shared
	// (100.64.0.0/10), unique-local and site-local (see ForbiddenAddr).
	// Off by default: local development servers are normal targets.
	RefusePrivate bool

	// forbidden replaces ForbiddenAddr (and RefusePrivate), and
	// loopbackOnly makes web_fetch refuse every address that is not
	// loopback, after the address check and before connect. Tests only:
	// the control that shows the address check is what refuses, and a
	// guarantee that no test reaches beyond loopback even if the check
	// were broken.
	forbidden    func(netip.Addr) string
	loopbackOnly bool
	// noOrphanGuard turns off what kills a command's processes when mecha
	// dies (see "Shell processes" in the package doc). Tests only: it is
	// the control that shows the guard is what stops the orphans.
	noOrphanGuard bool

	// redactor is Secrets' (nil: none).
	redactor *tool.Redactor
}

func (o Options) withDefaults() Options {
	if o.MaxResultBytes <= 0 {
		o.MaxResultBytes = DefaultMaxResultBytes
	}
	if o.ShellTimeout <= 0 {
		o.ShellTimeout = DefaultShellTimeout
	}
	if o.MaxShellTimeout <= 0 {
		o.MaxShellTimeout = DefaultMaxShellTimeout
	}
	if o.MaxShellTimeout < o.ShellTimeout {
		o.MaxShellTimeout = o.ShellTimeout
	}
	if o.Shell == "" {
		o.Shell = DefaultShell
	}
	if o.FetchTimeout <= 0 {
		o.FetchTimeout = DefaultFetchTimeout
	}
	if o.MaxFetchBytes <= 0 {
		o.MaxFetchBytes = DefaultMaxFetchBytes
	}
	switch {
	case o.MaxRedirects == 0:
		o.MaxRedirects = DefaultMaxRedirects
	case o.MaxRedirects < 0:
		o.MaxRedirects = 0
	}
	if o.KillGrace <= 0 {
		o.KillGrace = 2 * time.Second
	}
	if o.redactor == nil {
		o.redactor = tool.NewRedactor(o.Secrets)
	}
	return o
}

// All returns the built-in tools in a fixed order: fs_read, fs_list,
// fs_write, fs_edit, fs_grep, fs_glob, shell, web_fetch.
func All(ws Workspace, opts Options) []tool.Tool {
	return []tool.Tool{
		NewFSRead(ws, opts),
		NewFSList(ws, opts),
		NewFSWrite(ws, opts),
		NewFSEdit(ws, opts),
		NewFSGrep(ws, opts),
		NewFSGlob(ws, opts),
		NewShell(ws, opts),
		NewWebFetch(opts),
	}
}

// errorResult is a result the model reads as a failure.
func errorResult(format string, args ...any) tool.Result {
	return tool.Result{Content: fmt.Sprintf(format, args...), IsError: true}
}

// decodeInput decodes a call's input into v strictly: unknown fields,
// trailing data and wrong types are errors whose message names the
// problem. Empty input counts as {}. fields lists the accepted field names
// for the message about an unknown one.
func decodeInput(input json.RawMessage, v any, fields ...string) error {
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage("{}")
	}
	if bytes.Equal(bytes.TrimSpace(input), []byte("null")) {
		return errors.New("invalid input: want a JSON object, got null")
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return inputError(err, fields)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("invalid input: trailing data after the JSON object")
	}
	return nil
}

func inputError(err error, fields []string) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return fmt.Errorf("invalid input: want a JSON object, got %s", typeErr.Value)
		}
		return fmt.Errorf("invalid input: field %q must be %s, got %s", typeErr.Field, jsonType(typeErr.Type.Kind().String()), typeErr.Value)
	case errors.As(err, &syntaxErr):
		return fmt.Errorf("invalid input: malformed JSON at byte %d: %v", syntaxErr.Offset, err)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("invalid input: truncated JSON")
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if strings.HasPrefix(msg, "unknown field") {
		return fmt.Errorf("invalid input: %s (accepted fields: %s)", msg, strings.Join(fields, ", "))
	}
	return fmt.Errorf("invalid input: %s", msg)
}

func jsonType(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "int", "int64", "int32", "uint", "uint64":
		return "an integer"
	case "float64", "float32":
		return "a number"
	}
	return kind
}

// missing returns the error for a required field that is absent.
func missing(field string) error {
	return fmt.Errorf("invalid input: missing required field %q", field)
}
