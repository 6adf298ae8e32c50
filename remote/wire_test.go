package remote_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/remote"
	"github.com/mecha-agent/mecha/testkit/s3test"
)

// recorder keeps every request's method, path, query and headers, and
// its body's MD5, on its way to the server.
type recorder struct {
	mu   sync.Mutex
	reqs []recorded
}

type recorded struct {
	method, path, query string
	header              http.Header
	md5                 string // base64, as Content-MD5 spells it; "" for no body
}

func (rc *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r := recorded{method: req.Method, path: req.URL.Path, query: req.URL.RawQuery, header: req.Header.Clone()}
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		h := md5.Sum(b)
		r.md5 = base64.StdEncoding.EncodeToString(h[:])
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	rc.mu.Lock()
	rc.reqs = append(rc.reqs, r)
	rc.mu.Unlock()
	return http.DefaultTransport.RoundTrip(req)
}

// TestWire: what goes over the wire is what any S3 server takes: the
// bucket in the path (path_style), no aws-chunked bodies, checksum
// trailers or x-amz-checksum headers (which the AWS SDK adds by default
// since 2025 and servers other than AWS may refuse), no Expect:
// 100-continue, and each session body (a single PUT, each part) with its
// Content-MD5, which the server checks, and the session's SHA-256 in
// its metadata.
func TestWire(t *testing.T) {
	srv := s3test.Start(t)
	srv.Bucket("bucket7")
	ctx := context.Background()
	dir := t.TempDir()
	rec := &recorder{}
	r := open(t, srv, "bucket7", filepath.Join(dir, "state"), rec)
	small := writeSession(t, dir, "20261130T130000-0000000c", 3, 10, false)
	big := writeSession(t, dir, "20261130T130001-0000000d", 2400, 4000, false) // about 9.7 MB: 2 parts
	out, err := r.Push(ctx, []session.Ref{small, big}, nil)
	if err != nil || len(out) != 2 {
		t.Fatalf("push: %v %v", out, err)
	}
	var puts, parts, creates int
	for _, q := range rec.reqs {
		what := q.method + " " + q.path + "?" + q.query
		if !strings.HasPrefix(q.path, "/bucket7/") && q.path != "/bucket7" {
			t.Errorf("%s: the bucket is not in the path", what)
		}
		for k, v := range q.header {
			lk := strings.ToLower(k)
			if strings.HasPrefix(lk, "x-amz-checksum") || lk == "x-amz-trailer" || lk == "x-amz-sdk-checksum-algorithm" || lk == "expect" || lk == "x-amz-decoded-content-length" {
				t.Errorf("%s: header %s: %v", what, k, v)
			}
		}
		if ce := q.header.Get("Content-Encoding"); strings.Contains(ce, "aws-chunked") {
			t.Errorf("%s: Content-Encoding %s", what, ce)
		}
		if cs := q.header.Get("X-Amz-Content-Sha256"); strings.HasPrefix(cs, "STREAMING-") {
			t.Errorf("%s: X-Amz-Content-Sha256 %s", what, cs)
		}
		isSession := strings.Contains(q.path, "/sessions/sessions/")
		switch {
		case q.method == http.MethodPut && isSession && strings.Contains(q.query, "partNumber="):
			parts++
			if got := q.header.Get("Content-Md5"); got == "" || got != q.md5 {
				t.Errorf("%s: Content-MD5 %q, the body's is %q", what, got, q.md5)
			}
		case q.method == http.MethodPut && isSession:
			puts++
			if got := q.header.Get("Content-Md5"); got == "" || got != q.md5 {
				t.Errorf("%s: Content-MD5 %q, the body's is %q", what, got, q.md5)
			}
			if q.header.Get("X-Amz-Meta-Mecha-Sha256") == "" || q.header.Get("If-None-Match") != "*" {
				t.Errorf("%s: no checksum metadata or no If-None-Match: *: %v", what, q.header)
			}
		case q.method == http.MethodPost && isSession && strings.Contains(q.query, "uploads"):
			creates++
			if q.header.Get("X-Amz-Meta-Mecha-Sha256") == "" || q.header.Get("Content-Type") != "application/x-ndjson" {
				t.Errorf("%s: no checksum metadata or content type: %v", what, q.header)
			}
		}
	}
	if puts != 1 || parts != 2 || creates != 1 {
		t.Fatalf("%d single PUTs, %d parts, %d multipart uploads; want 1, 2, 1", puts, parts, creates)
	}
}

// answerer answers every request 200 with no body, keeping what was
// asked: a server that takes anything, for what a client sends.
type answerer struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (a *answerer) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	a.mu.Lock()
	a.reqs = append(a.reqs, req)
	a.mu.Unlock()
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Header: http.Header{"Etag": {`"0"`}},
		Body: http.NoBody, Request: req, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
}

// TestSessionToken: temporary credentials go with every request and
// into the presigned links: the access key in the signature's scope, the
// session token in X-Amz-Security-Token, in the region given; the secret
// in neither.
func TestSessionToken(t *testing.T) {
	const (
		key, secret, token = "ASIAEXAMPLEKEY000001", "tmp-secret-value-1234567", "tmp-session-token-abcdef"
	)
	a := &answerer{}
	r, err := remote.Open(remote.Options{Name: "team", URL: "s3://bucket8/p", Endpoint: "http://127.0.0.1:1", Region: "eu-west-3",
		Creds: remote.Credentials{AccessKey: key, SecretKey: secret, SessionToken: token}, Transport: a})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := r.Check(ctx); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ref := writeSession(t, dir, "20261130T140000-0000000e", 2, 5, false)
	sh, err := remote.Prepare(ref.Path(), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Share(ctx, sh, nil, dir, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.reqs) != 3 { // HEAD bucket, PUT copy, PUT page
		t.Fatalf("%d requests, want 3", len(a.reqs))
	}
	for _, q := range a.reqs {
		auth := q.Header.Get("Authorization")
		if q.Header.Get("X-Amz-Security-Token") != token || !strings.Contains(auth, "Credential="+key+"/") ||
			!strings.Contains(auth, "/eu-west-3/s3/aws4_request") || strings.Contains(auth, secret) {
			t.Errorf("%s %s: token %q, authorization %q", q.Method, q.URL, q.Header.Get("X-Amz-Security-Token"), auth)
		}
		if !strings.HasPrefix(q.URL.Path, "/bucket8/") && q.URL.Path != "/bucket8" {
			t.Errorf("%s %s: the bucket is not in the path (a server not AWS's)", q.Method, q.URL)
		}
	}
	for _, link := range []string{res.Page, res.Copy} {
		u, err := url.Parse(link)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		if q.Get("X-Amz-Security-Token") != token || !strings.HasPrefix(q.Get("X-Amz-Credential"), key+"/") ||
			q.Get("X-Amz-Expires") != "3600" || strings.Contains(link, secret) || u.Host != "127.0.0.1:1" {
			t.Errorf("presigned link %s", link)
		}
	}
}

// TestAWSAddressing: with no endpoint the remote is AWS's S3 in its
// region, the bucket in the host name (virtual-host style), but for
// path_style and for a bucket with a dot (which the certificate of
// *.s3.REGION.amazonaws.com does not cover). No request leaves the
// machine: the transport answers.
func TestAWSAddressing(t *testing.T) {
	for _, c := range []struct {
		bucket    string
		pathStyle bool
		want      string // host and path of the HEAD of the bucket
	}{
		{"team-bucket", false, "team-bucket.s3.eu-west-3.amazonaws.com/"},
		{"team-bucket", true, "s3.eu-west-3.amazonaws.com/team-bucket"},
		{"team.bucket", false, "s3.eu-west-3.amazonaws.com/team.bucket"},
	} {
		a := &answerer{}
		r, err := remote.Open(remote.Options{Name: "team", URL: "s3://" + c.bucket + "/p", Region: "eu-west-3", PathStyle: c.pathStyle,
			Creds: remote.Credentials{AccessKey: "AKIAEXAMPLEKEY000001", SecretKey: "s"}, Transport: a})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Check(context.Background()); err != nil {
			t.Fatal(err)
		}
		if len(a.reqs) != 1 {
			t.Fatalf("%d requests", len(a.reqs))
		}
		u := a.reqs[0].URL
		if got := strings.TrimSuffix(u.Host+u.Path, "/"); u.Scheme != "https" || got != strings.TrimSuffix(c.want, "/") {
			t.Errorf("bucket %s, path_style %v: %s, want https://%s", c.bucket, c.pathStyle, u, c.want)
		}
	}
}
