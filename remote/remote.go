package remote

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Credentials are the keys a remote is opened with, read by the caller
// from the AWS variables or files. Source says where they came from, for
// "config show" (never the values).
type Credentials struct {
	AccessKey, SecretKey, SessionToken string
	Source                             string
}

// values are the credential values, to scrub from every error.
func (c Credentials) values() []string {
	var out []string
	for _, v := range []string{c.AccessKey, c.SecretKey, c.SessionToken} {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// Options open a remote.
type Options struct {
	Name      string // the [remotes.NAME] it was configured as
	URL       string // s3://BUCKET[/PREFIX]
	Endpoint  string // http(s)://host:port; empty for AWS
	Region    string
	PathStyle bool
	Creds     Credentials
	// Transport carries the requests (nil: a transport of the package's
	// own, never http.DefaultTransport's shared state).
	Transport http.RoundTripper
	// PartSize is the size of each part of a multipart upload, and the
	// size above which a session goes up in parts (default 16 MiB; S3
	// refuses parts under 5 MiB but the last).
	PartSize int64
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// StateDir keeps the upload ids of interrupted multipart uploads, so a
	// later push resumes them ("" : none are resumed).
	StateDir string
	// Who names the pusher in the index (a user@host); may be empty.
	Who string
}

// Remote is an open remote.
type Remote struct {
	Name     string
	bucket   string
	prefix   string // "" or "PREFIX/"
	endpoint string
	c        *minio.Client
	core     minio.Core
	partSize int64
	now      func() time.Time
	secrets  []string
	stateDir string
	who      string
}

// DefaultPartSize is the part size of a multipart upload.
const DefaultPartSize = 16 << 20

// Open opens a remote: it builds the client and checks nothing on the
// server (the first request does).
func Open(o Options) (*Remote, error) {
	rest, ok := strings.CutPrefix(o.URL, "s3://")
	bucket, prefix, _ := strings.Cut(rest, "/")
	if !ok || bucket == "" {
		return nil, fmt.Errorf("remote %s: url %q is not s3://BUCKET[/PREFIX]", o.Name, o.URL)
	}
	prefix = strings.Trim(prefix, "/")
	if prefix != "" {
		prefix = path.Clean(prefix) + "/"
	}
	host, secure := "s3.amazonaws.com", true
	if o.Endpoint != "" {
		u, err := url.Parse(o.Endpoint)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("remote %s: endpoint is not an http:// or https:// URL", o.Name)
		}
		host, secure = u.Host, u.Scheme == "https"
	}
	if o.Creds.AccessKey == "" || o.Creds.SecretKey == "" {
		return nil, fmt.Errorf("remote %s: %w: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a profile in ~/.aws/credentials (AWS_PROFILE, AWS_SHARED_CREDENTIALS_FILE)", o.Name, ErrNoCredentials)
	}
	region := o.Region
	if region == "" {
		region = "us-east-1"
	}
	lookup := minio.BucketLookupAuto
	if o.PathStyle {
		lookup = minio.BucketLookupPath
	}
	tr := o.Transport
	if tr == nil {
		tr = &http.Transport{Proxy: nil, DialContext: (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
			MaxIdleConnsPerHost: 16, IdleConnTimeout: 90 * time.Second, ResponseHeaderTimeout: 2 * time.Minute}
	}
	c, err := minio.New(host, &minio.Options{
		Creds:        credentials.NewStaticV4(o.Creds.AccessKey, o.Creds.SecretKey, o.Creds.SessionToken),
		Secure:       secure,
		Region:       region,
		BucketLookup: lookup,
		Transport:    tr,
		MaxRetries:   2,
	})
	if err != nil {
		return nil, fmt.Errorf("remote %s: %s", o.Name, scrub(err.Error(), o.Creds.values()))
	}
	ps := o.PartSize
	if ps <= 0 {
		ps = DefaultPartSize
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	ep := o.Endpoint
	if ep == "" {
		ep = "https://" + host
	}
	return &Remote{Name: o.Name, bucket: bucket, prefix: prefix, endpoint: ep, c: c, core: minio.Core{Client: c},
		partSize: ps, now: now, secrets: o.Creds.values(), stateDir: o.StateDir, who: o.Who}, nil
}

// Errors a caller can tell apart.
var (
	ErrNoCredentials = errors.New("no credentials")
	ErrCredentials   = errors.New("the server refused the credentials")
	ErrNoBucket      = errors.New("no such bucket")
	ErrUnreachable   = errors.New("cannot reach the server")
	ErrNotFound      = errors.New("not on the remote")
	ErrConflict      = errors.New("conflict")
)

// Error is a failed request: what was being done, and why, in one line
// that holds no credential.
type Error struct {
	Remote, Op string
	Kind       error // one of the Err values above, or nil
	Detail     string
}

func (e *Error) Error() string {
	msg := "remote " + e.Remote + ": " + e.Op
	if e.Kind != nil {
		msg += ": " + e.Kind.Error()
	}
	if e.Detail != "" {
		msg += " (" + e.Detail + ")"
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Kind }

// fail turns a client error into an *Error, scrubbed of credentials.
func (r *Remote) fail(op string, err error) error {
	if err == nil {
		return nil
	}
	var already *Error
	if errors.As(err, &already) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	resp := minio.ToErrorResponse(err)
	e := &Error{Remote: r.Name, Op: op}
	switch resp.Code {
	case "InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "InvalidToken", "ExpiredToken", "AuthorizationHeaderMalformed":
		e.Kind, e.Detail = ErrCredentials, resp.Code
	case "NoSuchBucket":
		e.Kind, e.Detail = ErrNoBucket, "bucket "+r.bucket+" at "+r.endpoint
	case "NoSuchKey", "NotFound":
		e.Kind = ErrNotFound
	case "PreconditionFailed":
		e.Kind, e.Detail = ErrConflict, "the object changed on the server meanwhile"
	case "":
		var ue *url.Error
		var ne net.Error
		if errors.As(err, &ue) || errors.As(err, &ne) {
			e.Kind, e.Detail = ErrUnreachable, r.endpoint+": "+netReason(err)
		} else {
			e.Detail = scrub(err.Error(), r.secrets)
		}
	default:
		e.Detail = resp.Code
		if resp.Message != "" {
			e.Detail += ": " + resp.Message
		}
	}
	if resp.StatusCode == http.StatusForbidden && e.Kind == nil {
		e.Kind = ErrCredentials
	}
	e.Detail = scrub(e.Detail, r.secrets)
	return e
}

// netReason is the last part of a network error: "connection refused".
func netReason(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		s = s[i+2:]
	}
	return s
}

// scrub replaces each secret value in s.
func scrub(s string, secrets []string) string {
	for _, v := range secrets {
		if v != "" {
			s = strings.ReplaceAll(s, v, "[redacted]")
		}
	}
	return s
}

// key is the object name of a name under the prefix.
func (r *Remote) key(name string) string { return r.prefix + name }

// sessionKey is the object of session id.
func (r *Remote) sessionKey(id string) string { return r.key("sessions/" + id + ".jsonl") }

// Check makes one request that fails on wrong credentials and on a
// missing bucket, each with its own error.
func (r *Remote) Check(ctx context.Context) error {
	ok, err := r.c.BucketExists(ctx, r.bucket)
	if err != nil {
		return r.fail("checking bucket "+r.bucket, err)
	}
	if !ok {
		return &Error{Remote: r.Name, Op: "checking bucket " + r.bucket, Kind: ErrNoBucket, Detail: "bucket " + r.bucket + " at " + r.endpoint}
	}
	return nil
}

// isNotFound reports whether a client error says the object is missing.
func isNotFound(err error) bool {
	if errors.Is(err, ErrNotFound) {
		return true
	}
	code := minio.ToErrorResponse(err).Code
	return code == "NoSuchKey" || code == "NotFound"
}
