package remote_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/remote"
	"github.com/mecha-agent/mecha/testkit/s3test"
)

var perf = flag.Bool("perf", false, "measure push, pull and list --remote throughput against versitygw (docs/PERFORMANCE.md)")

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration{}, d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// TestThroughput prints the figures of docs/PERFORMANCE.md:
//
//	go test ./remote -run TestThroughput -perf -v
//
// push and pull of 200 sessions of about 64 KiB and of 4 of 16 MiB (in
// parts), each the median of 3 rounds on a fresh bucket, beside the same
// bytes put and got by the S3 client alone (the baseline: what any tool
// must pay); list --remote of 10,000 sessions (the index, one GET) beside
// listing the 10,000 session objects (ListObjectsV2, 1,000 a request).
func TestThroughput(t *testing.T) {
	if !*perf {
		t.Skip("a measurement: run with -perf")
	}
	srv := s3test.Start(t)
	ctx := context.Background()
	c := srv.Client()
	for _, shape := range []struct {
		n, records, pad int
	}{{200, 60, 1000}, {4, 4000, 4000}} {
		dir := t.TempDir()
		var refs []session.Ref
		var total int64
		var bodies [][]byte
		for i := 0; i < shape.n; i++ {
			id := perfID(i)
			ref := writeSession(t, dir, id, shape.records, shape.pad, false)
			refs = append(refs, ref)
			b, _ := readFile(ref.Path())
			bodies = append(bodies, b)
			total += int64(len(b))
		}
		var push, pull, put, get []time.Duration
		for round := 0; round < 3; round++ {
			bucket := fmt.Sprintf("perf-%d-%d", shape.n, round)
			srv.Bucket(bucket)
			r := open(t, srv, bucket, "", nil)
			start := time.Now()
			out, err := r.Push(ctx, refs, nil)
			if err != nil || len(out) != shape.n {
				t.Fatal(err)
			}
			push = append(push, time.Since(start))
			ix, _, _ := r.ReadIndex(ctx)
			store := &session.Store{Dir: filepath.Join(t.TempDir(), "s")}
			start = time.Now()
			ids, _ := ix.Select(nil, true, 0, time.Now())
			if _, err := r.Pull(ctx, store, ix, ids, nil); err != nil {
				t.Fatal(err)
			}
			pull = append(pull, time.Since(start))
			// The baseline: the same bytes through the client alone.
			base := bucket + "-raw"
			srv.Bucket(base)
			start = time.Now()
			for i, b := range bodies {
				if err := putRaw(ctx, c, base, fmt.Sprintf("k%d", i), b); err != nil {
					t.Fatal(err)
				}
			}
			put = append(put, time.Since(start))
			start = time.Now()
			for i := range bodies {
				o, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: &base, Key: aws.String(fmt.Sprintf("k%d", i))})
				if err != nil {
					t.Fatal(err)
				}
				var buf bytes.Buffer
				if _, err := buf.ReadFrom(o.Body); err != nil {
					t.Fatal(err)
				}
				o.Body.Close()
			}
			get = append(get, time.Since(start))
		}
		mb := float64(total) / (1 << 20)
		row := func(what string, d, base []time.Duration) {
			m, b := median(d), median(base)
			t.Logf("%-5s %3d sessions, %.1f MiB: %6.3f s, %7.1f sessions/s, %6.1f MiB/s; client alone %6.3f s (%.2fx)",
				what, shape.n, mb, m.Seconds(), float64(shape.n)/m.Seconds(), mb/m.Seconds(), b.Seconds(), m.Seconds()/b.Seconds())
		}
		row("push", push, put)
		row("pull", pull, get)
	}

	// list --remote of 10,000 sessions.
	srv.Bucket("perf-list")
	r := open(t, srv, "perf-list", "", nil)
	dir := t.TempDir()
	var refs []session.Ref
	for i := 0; i < 10000; i++ {
		refs = append(refs, writeSession(t, dir, perfID(i), 1, 10, false))
	}
	start := time.Now()
	if _, err := r.Push(ctx, refs, nil); err != nil {
		t.Fatal(err)
	}
	t.Logf("push 10000 small sessions: %.1f s", time.Since(start).Seconds())
	var list, objs []time.Duration
	for round := 0; round < 5; round++ {
		start := time.Now()
		ix, _, err := r.ReadIndex(ctx)
		if err != nil || len(ix.Sorted()) != 10000 {
			t.Fatal(err)
		}
		list = append(list, time.Since(start))
		start = time.Now()
		n := 0
		pages := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String("perf-list"), Prefix: aws.String("team/sessions/sessions/")})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			n += len(page.Contents)
		}
		if n != 10000 {
			t.Fatalf("listed %d objects", n)
		}
		objs = append(objs, time.Since(start))
	}
	t.Logf("list --remote, 10000 sessions: index %.3f s (1 request); listing the objects %.3f s (10 requests, names only) (%.2fx)",
		median(list).Seconds(), median(objs).Seconds(), median(list).Seconds()/median(objs).Seconds())
	_ = remote.DefaultPartSize
}

// putRaw puts b under key as a plain S3 client would: in one PUT, or in
// parts of partSize when it is larger (what minio-go's PutObject did for
// the earlier baseline).
func putRaw(ctx context.Context, c *s3.Client, bucket, key string, b []byte) error {
	if len(b) <= partSize {
		_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader(b)})
		return err
	}
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: &key})
	if err != nil {
		return err
	}
	var parts []types.CompletedPart
	for n, off := int32(1), 0; off < len(b); n, off = n+1, off+partSize {
		p, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: &bucket, Key: &key, UploadId: up.UploadId, PartNumber: aws.Int32(n),
			Body: bytes.NewReader(b[off:min(off+partSize, len(b))])})
		if err != nil {
			return err
		}
		parts = append(parts, types.CompletedPart{PartNumber: aws.Int32(n), ETag: p.ETag})
	}
	_, err = c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: &bucket, Key: &key, UploadId: up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	return err
}

func readFile(p string) ([]byte, error) { return os.ReadFile(p) }

// perfID is the i-th of a day's session ids, one a second.
func perfID(i int) string {
	return fmt.Sprintf("20261130T%02d%02d%02d-%08x", i/3600%24, i/60%60, i%60, i)
}

// answersAtOnce answers every request 200 with no body, at once: what is
// left of a request's time is the client's own work (signing, the
// SDK's middleware), what BenchmarkRequest measures.
type answersAtOnce struct{}

func (answersAtOnce) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Header: http.Header{"Etag": {`"0"`}}, Body: http.NoBody,
		Request: req, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
}

// BenchmarkRequest is the client's own cost of one small PUT (a shard of
// 1,000 bytes) on a transport that answers at once:
//
//	go test ./remote -run XXX -bench Request -count 5
func BenchmarkRequest(b *testing.B) {
	r, err := remote.Open(remote.Options{Name: "t", URL: "s3://bucket/p", Endpoint: "http://127.0.0.1:1", PathStyle: true,
		Creds: remote.Credentials{AccessKey: "AKIAEXAMPLE", SecretKey: "s"}, Transport: answersAtOnce{}})
	if err != nil {
		b.Fatal(err)
	}
	body := make([]byte, 1000)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := r.PutShard(ctx, "run", 1, 1, body); err != nil {
			b.Fatal(err)
		}
	}
}
