package remote

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
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
	c        *s3.Client
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
	tr := o.Transport
	if tr == nil {
		tr = &http.Transport{Proxy: nil, DialContext: (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
			MaxIdleConnsPerHost: 16, IdleConnTimeout: 90 * time.Second, ResponseHeaderTimeout: 2 * time.Minute}
	}
	// The client is built from these options alone: no shared config,
	// environment or instance metadata is read (the caller read the
	// credentials and the region).
	so := s3.Options{
		Region:       region,
		Credentials:  credentials.NewStaticCredentialsProvider(o.Creds.AccessKey, o.Creds.SecretKey, o.Creds.SessionToken),
		HTTPClient:   &http.Client{Transport: tr},
		UsePathStyle: pathStyle(o.PathStyle, o.Endpoint != "", secure, host, bucket),
		Retryer: retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = 2
			so.Backoff = backoff{}
			so.RateLimiter = ratelimit.None
		}),
		// Checksums only where S3 requires them: no aws-chunked bodies
		// with CRC trailers, which servers other than AWS may refuse; a
		// single PUT and each part carry their Content-MD5 instead.
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
		// No "Expect: 100-continue" on large bodies.
		ContinueHeaderThresholdBytes: -1,
	}
	if o.Endpoint != "" {
		scheme := "http"
		if secure {
			scheme = "https"
		}
		so.BaseEndpoint = aws.String(scheme + "://" + host)
	}
	c := s3.New(so)
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
	return &Remote{Name: o.Name, bucket: bucket, prefix: prefix, endpoint: ep, c: c,
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
	code, msg, status := serverError(err)
	e := &Error{Remote: r.Name, Op: op}
	switch code {
	case "InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "InvalidToken", "ExpiredToken", "AuthorizationHeaderMalformed":
		e.Kind, e.Detail = ErrCredentials, code
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
		e.Detail = code
		if msg != "" {
			e.Detail += ": " + msg
		}
	}
	if status == http.StatusForbidden && e.Kind == nil {
		e.Kind = ErrCredentials
	}
	e.Detail = scrub(e.Detail, r.secrets)
	return e
}

// serverError is what the server answered to a failed request: its error
// code and message ("" for a request that got no answer) and the HTTP
// status. An answer without a body (to a HEAD) has a code made of its
// status, named as S3 names it in a body: AccessDenied for 403, NotFound
// for 404.
func serverError(err error) (code, msg string, status int) {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return "", "", status
	}
	code, msg = ae.ErrorCode(), ae.ErrorMessage()
	if text := http.StatusText(status); status != 0 && msg == text && code == strings.ReplaceAll(text, " ", "") {
		msg = ""
		if status == http.StatusForbidden {
			code = "AccessDenied"
		}
	}
	return code, msg, status
}

// pathStyle reports whether a bucket is addressed in the path
// (http://host/BUCKET/KEY) rather than in the host name
// (http://BUCKET.host/KEY): when the options say so, and otherwise for
// every server but AWS's, Google's and Alibaba's (whose names are known to
// serve buckets as host names), and for a bucket with a dot over https
// (BUCKET.host would not match the server's certificate).
func pathStyle(force, custom, secure bool, host, bucket string) bool {
	if force || (secure && strings.Contains(bucket, ".")) {
		return true
	}
	if !custom {
		return false
	}
	h := strings.ToLower(host)
	if hn, _, err := net.SplitHostPort(h); err == nil {
		h = hn
	}
	for _, suffix := range []string{".amazonaws.com", ".amazonaws.com.cn", ".aliyuncs.com"} {
		if strings.HasSuffix(h, suffix) {
			return false
		}
	}
	return h != "storage.googleapis.com"
}

// backoff waits before a retry as long as minio-go, mecha's earlier
// client, did: a random part of 200 ms doubled on each attempt, at most 1 s.
type backoff struct{}

func (backoff) BackoffDelay(attempt int, _ error) (time.Duration, error) {
	d := min(time.Second, 200*time.Millisecond<<min(max(attempt-1, 0), 8))
	return time.Duration(rand.Int64N(int64(d) + 1)), nil
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
	_, err := r.c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &r.bucket})
	if code, _, _ := serverError(err); code == "NotFound" || code == "NoSuchBucket" {
		return &Error{Remote: r.Name, Op: "checking bucket " + r.bucket, Kind: ErrNoBucket, Detail: "bucket " + r.bucket + " at " + r.endpoint}
	}
	return r.fail("checking bucket "+r.bucket, err)
}

// isNotFound reports whether a client error says the object is missing.
func isNotFound(err error) bool {
	if errors.Is(err, ErrNotFound) {
		return true
	}
	code, _, _ := serverError(err)
	return code == "NoSuchKey" || code == "NotFound"
}
