package remote_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mecha-agent/mecha/record/session"
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
