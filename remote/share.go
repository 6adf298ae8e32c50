package remote

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/record/pricing"
	"github.com/mecha-agent/mecha/record/session"
	viewhtml "github.com/mecha-agent/mecha/record/sessionview/html"
	"github.com/mecha-agent/mecha/record/transcript"
)

// Withheld is one record of a shared copy whose text was left out.
type Withheld struct {
	Line  int    // the record's line in the session (1 is the header)
	What  string // "user message", "assistant message", "tool call", "compaction summary"
	Bytes int    // the size of what was left out
	Why   string
}

// Shared is a copy of a session made for other eyes.
type Shared struct {
	ID       string
	Copy     []byte // the JSONL copy: private text withheld, secrets redacted
	Withheld []Withheld
	// Redacted counts the secrets replaced in the copy.
	Redacted int
}

// Reasons text is withheld.
const (
	whyPrivate = "it came into the conversation after private data had (a private taint checkpoint)"
	whyUnknown = "no taint checkpoint follows it, so whether it is private is unknown"
)

// notice replaces withheld text in the copy.
func notice(n int, why string) string {
	return fmt.Sprintf("[withheld by mecha share: %d bytes left out because %s; the sharer can include it with --include-private]", n, why)
}

// Prepare makes the shared copy of the session at path: the text of every
// record (a message, a tool call, a compaction's summary, an attach's
// system prompt) that a private taint checkpoint covers (the first checkpoint
// after it says private data had entered the conversation), or that no
// checkpoint covers, replaced by a notice saying how much was left out and
// why (unless includePrivate); then every secret (the values of secrets,
// and what has the shape of a key: AKIA..., sk-..., ghp_..., xox..., a
// PEM private key) replaced in every line.
func Prepare(path string, includePrivate bool, secrets []tool.Secret) (*Shared, error) {
	s, err := session.Load(path)
	if err != nil {
		return nil, err
	}
	sh := &Shared{ID: session.FileID(path)}
	cover := coverage(s.Records)
	var buf bytes.Buffer
	meta := s.Meta
	if err := transcript.AppendEncode(&buf, &meta); err != nil {
		return nil, err
	}
	for i, rec := range s.Records {
		why := ""
		if !includePrivate {
			switch {
			case cover[i] == nil:
				why = whyUnknown
			case cover[i].Private:
				why = whyPrivate
			}
		}
		if why != "" {
			rec = withhold(rec, why, i+2, &sh.Withheld)
		}
		if err := transcript.AppendEncode(&buf, rec); err != nil {
			return nil, err
		}
	}
	sh.Copy, sh.Redacted = redact(buf.Bytes(), secrets)
	return sh, nil
}

// coverage gives each record the merged taint of the first checkpoint
// after it (nil where none follows); a checkpoint covers itself.
func coverage(recs []transcript.Record) []*transcript.Taint {
	out := make([]*transcript.Taint, len(recs))
	var merged transcript.Taint
	pending := 0
	for i, r := range recs {
		if c, ok := r.(*transcript.Taint); ok {
			merged = merged.Merge(*c)
			m := merged
			for j := i - pending; j <= i; j++ {
				out[j] = &m
			}
			pending = 0
			continue
		}
		pending++
	}
	return out
}

// withhold returns rec with its text replaced by a notice, and notes it.
func withhold(rec transcript.Record, why string, line int, notes *[]Withheld) transcript.Record {
	switch r := rec.(type) {
	case *transcript.Message:
		n := 0
		for _, b := range r.Content {
			raw, _ := json.Marshal(b)
			n += len(raw)
		}
		if n == 0 {
			return rec
		}
		c := *r
		c.Content = []transcript.Block{transcript.TextBlock(notice(n, why))}
		*notes = append(*notes, Withheld{Line: line, What: r.Role + " message", Bytes: n, Why: why})
		return &c
	case *transcript.ToolCall:
		n := len(r.Arguments) + len(r.Content) + len(r.StructuredContent) + len(r.Error)
		if n == 0 {
			return rec
		}
		c := *r
		note, _ := json.Marshal(notice(n, why))
		c.Arguments, c.StructuredContent, c.Error = nil, nil, ""
		c.Content = json.RawMessage(`[{"type":"text","text":` + string(note) + `}]`)
		*notes = append(*notes, Withheld{Line: line, What: "tool call " + r.Tool, Bytes: n, Why: why})
		return &c
	case *transcript.Config:
		// The system prompt holds the project's instructions, read from
		// the workspace.
		if r.SystemPrompt == nil || *r.SystemPrompt == "" {
			return rec
		}
		c := *r
		n := notice(len(*r.SystemPrompt), why)
		c.SystemPrompt = &n
		*notes = append(*notes, Withheld{Line: line, What: "system prompt", Bytes: len(*r.SystemPrompt), Why: why})
		return &c
	case *transcript.Compaction:
		if r.Summary == "" {
			return rec
		}
		c := *r
		c.Summary = notice(len(r.Summary), why)
		*notes = append(*notes, Withheld{Line: line, What: "compaction summary", Bytes: len(r.Summary), Why: why})
		return &c
	case *transcript.Unknown:
		raw, _ := transcript.Encode(r)
		*notes = append(*notes, Withheld{Line: line, What: "record of kind " + r.Kind(), Bytes: len(raw), Why: why})
		return &transcript.Message{Role: "user", Content: []transcript.Block{transcript.TextBlock(notice(len(raw), why))}, At: r.At}
	}
	return rec
}

// keyShapes are what a key looks like, found whatever variable held it.
var keyShapes = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}|\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}|\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{40,}|\bxox[abprs]-[A-Za-z0-9-]{10,}|-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----`)
})

// redact replaces secrets in JSONL: each value in every form a Redactor
// knows, and as it reads inside a JSON string; then key shapes.
func redact(data []byte, secrets []tool.Secret) ([]byte, int) {
	var all []tool.Secret
	for _, s := range secrets {
		all = append(all, s)
		if q, _ := json.Marshal(s.Value); len(q) > 2 && string(q[1:len(q)-1]) != s.Value {
			all = append(all, tool.Secret{Name: s.Name, Value: string(q[1 : len(q)-1])})
		}
	}
	n := 0
	text := string(data)
	if r := tool.NewRedactor(all); r != nil {
		red := r.Replace(text)
		n += bytes.Count([]byte(red), []byte("[redacted ")) - bytes.Count(data, []byte("[redacted "))
		text = red
	}
	text = keyShapes().ReplaceAllStringFunc(text, func(string) string { n++; return "[redacted key]" })
	return []byte(text), n
}

// ShareResult is where a shared copy went.
type ShareResult struct {
	Key     string // the copy's object (its page beside it, .html)
	Page    string // a presigned link to the page
	Copy    string // a presigned link to the JSONL copy
	Expires time.Time
}

// MaxExpiry is the longest a presigned link lives (SigV4's limit).
const MaxExpiry = 7 * 24 * time.Hour

// Share uploads the copy and its HTML page (rendered from the copy alone,
// so nothing withheld can be in it) under shared/TOKEN/, TOKEN random, and
// presigns a link to each valid for expires.
func (r *Remote) Share(ctx context.Context, sh *Shared, prices pricing.Table, tmp string, expires time.Duration) (*ShareResult, error) {
	if expires <= 0 || expires > MaxExpiry {
		return nil, fmt.Errorf("remote %s: share: --expires must be between 1s and 7 days (168h)", r.Name)
	}
	dir, err := os.MkdirTemp(tmp, "mecha-share-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	copyPath := filepath.Join(dir, sh.ID+session.Ext)
	if err := os.WriteFile(copyPath, sh.Copy, 0o600); err != nil {
		return nil, err
	}
	var page bytes.Buffer
	if err := viewhtml.Write(&page, copyPath, prices, viewhtml.Options{}); err != nil {
		return nil, fmt.Errorf("remote %s: share: the page: %w", r.Name, err)
	}
	tok := make([]byte, 16)
	if _, err := rand.Read(tok); err != nil {
		return nil, err
	}
	base := r.key("shared/" + hex.EncodeToString(tok) + "/" + sh.ID)
	for _, o := range []struct {
		key, ctype string
		body       []byte
	}{{base + ".jsonl", "application/x-ndjson", sh.Copy}, {base + ".html", "text/html; charset=utf-8", page.Bytes()}} {
		in := &s3.PutObjectInput{Bucket: &r.bucket, Key: aws.String(o.key), Body: bytes.NewReader(o.body),
			ContentLength: aws.Int64(int64(len(o.body))), ContentType: aws.String(o.ctype)}
		condition(in, "")
		if _, err := r.c.PutObject(ctx, in); err != nil {
			return nil, r.fail("share "+sh.ID, err)
		}
	}
	res := &ShareResult{Key: base + ".jsonl", Expires: r.now().Add(expires).UTC()}
	ps := s3.NewPresignClient(r.c, s3.WithPresignExpires(expires))
	pu, err := ps.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: &r.bucket, Key: aws.String(base + ".html")})
	if err != nil {
		return nil, r.fail("share "+sh.ID+": presigning", err)
	}
	cu, err := ps.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: &r.bucket, Key: aws.String(base + ".jsonl")})
	if err != nil {
		return nil, r.fail("share "+sh.ID+": presigning", err)
	}
	res.Page, res.Copy = pu.URL, cu.URL
	return res, nil
}
