package remote_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/remote"
	"github.com/mecha-agent/mecha/testkit/s3test"
)

const partSize = 5 << 20 // S3's smallest part

// open opens a remote on the server's bucket, with the upload state in
// state.
func open(t *testing.T, srv *s3test.Server, bucket, state string, tr http.RoundTripper) *remote.Remote {
	t.Helper()
	r, err := remote.Open(remote.Options{Name: "team", URL: "s3://" + bucket + "/team/sessions", Endpoint: srv.Endpoint,
		PathStyle: true, Creds: remote.Credentials{AccessKey: s3test.AccessKey, SecretKey: s3test.SecretKey},
		PartSize: partSize, StateDir: state, Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// writeSession writes a session file of n records, the last cut when torn.
func writeSession(t *testing.T, dir, id string, n int, pad int, torn bool) session.Ref {
	t.Helper()
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"record":"meta","format":1,"id":%q,"created_at":"2026-11-30T10:00:00Z","provider":"mock","model":"mock-1","workspace":"/w","title":"t %s"}`+"\n", id, id)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `{"record":"message","role":"user","content":[{"type":"text","text":"%d %s"}]}`+"\n", i, strings.Repeat("x", pad))
	}
	if torn {
		b.WriteString(`{"record":"message","role":"assist`)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	ref := session.Ref{Dir: dir, ID: id}
	if err := os.WriteFile(ref.Path(), b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return ref
}

func actions(out []remote.Outcome) string {
	var s []string
	for _, o := range out {
		s = append(s, o.Action)
	}
	return strings.Join(s, ",")
}

func TestPushPull(t *testing.T) {
	srv := s3test.Start(t)
	srv.Bucket("bucket1")
	ctx := context.Background()
	a, b := t.TempDir(), t.TempDir()
	r := open(t, srv, "bucket1", filepath.Join(a, "state"), nil)

	const id = "20261130T100000-0000000a"
	ref := writeSession(t, a, id, 3, 10, true)
	out, err := r.Push(ctx, []session.Ref{ref}, nil)
	if err != nil || actions(out) != remote.Sent {
		t.Fatalf("first push: %v %v", actions(out), err)
	}
	// Only the complete lines went up.
	full, _ := os.ReadFile(ref.Path())
	cut := full[:bytes.LastIndexByte(full, '\n')+1]
	objs := srv.Objects("bucket1", "team/sessions/sessions/")
	if got := objs["team/sessions/sessions/"+id+".jsonl"]; !bytes.Equal(got, cut) {
		t.Fatalf("remote copy is %d bytes, want the %d of the complete lines", len(got), len(cut))
	}
	// A second push moves nothing.
	out, err = r.Push(ctx, []session.Ref{ref}, nil)
	if err != nil || actions(out) != remote.Unchanged || out[0].Bytes != 0 {
		t.Fatalf("second push: %v %d %v", actions(out), out[0].Bytes, err)
	}
	// The torn line completed and more written: updated.
	f, _ := os.OpenFile(ref.Path(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`ant","content":[]}` + "\n")
	f.Close()
	out, err = r.Push(ctx, []session.Ref{ref}, nil)
	if err != nil || actions(out) != remote.Updated {
		t.Fatalf("grown push: %v %v", actions(out), err)
	}
	// Pull into another store: byte-identical.
	store := &session.Store{Dir: filepath.Join(b, "sessions")}
	ix, _, err := r.ReadIndex(ctx)
	if err != nil || len(ix.Sessions) != 1 || ix.Sessions[id].Title != "t "+id {
		t.Fatalf("index: %+v %v", ix, err)
	}
	out, err = r.Pull(ctx, store, ix, []string{id}, nil)
	if err != nil || actions(out) != remote.Received {
		t.Fatalf("pull: %v %v", actions(out), err)
	}
	local, _ := os.ReadFile(ref.Path())
	pulled, _ := os.ReadFile(filepath.Join(store.Dir, id+".jsonl"))
	if !bytes.Equal(local, pulled) {
		t.Fatal("the pulled session is not byte-identical to the pushed one")
	}
	if fi, _ := os.Stat(filepath.Join(store.Dir, id+".jsonl")); fi.Mode().Perm() != 0o600 {
		t.Errorf("pulled mode %v, want 0600", fi.Mode().Perm())
	}
	out, _ = r.Pull(ctx, store, ix, []string{id}, nil)
	if actions(out) != remote.Unchanged {
		t.Fatalf("second pull: %v", actions(out))
	}

	// A conflict: the other home writes something else after the shared
	// prefix, and pushes; the first home's push is refused, the remote
	// keeps the other's bytes.
	rb := open(t, srv, "bucket1", filepath.Join(b, "state"), nil)
	g, _ := os.OpenFile(filepath.Join(store.Dir, id+".jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	g.WriteString(`{"record":"message","role":"user","content":[{"type":"text","text":"from b"}]}` + "\n")
	g.Close()
	if out, err := rb.Push(ctx, []session.Ref{{Dir: store.Dir, ID: id}}, nil); err != nil || actions(out) != remote.Updated {
		t.Fatalf("push from b: %v %v", actions(out), err)
	}
	f, _ = os.OpenFile(ref.Path(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"record":"message","role":"user","content":[{"type":"text","text":"from a"}]}` + "\n")
	f.Close()
	before := srv.Objects("bucket1", "team/sessions/sessions/")
	out, err = r.Push(ctx, []session.Ref{ref}, nil)
	if err != nil || actions(out) != remote.Conflict || !strings.Contains(out[0].Note, "not a prefix") {
		t.Fatalf("conflicting push: %v %+v %v", actions(out), out, err)
	}
	after := srv.Objects("bucket1", "team/sessions/sessions/")
	if !bytes.Equal(before["team/sessions/sessions/"+id+".jsonl"], after["team/sessions/sessions/"+id+".jsonl"]) {
		t.Fatal("a conflicting push overwrote the remote copy")
	}
	// And the pull of it into a is a conflict too, leaving a's file.
	ix, _, _ = r.ReadIndex(ctx)
	out, err = r.Pull(ctx, &session.Store{Dir: a}, ix, []string{id}, nil)
	if err != nil || actions(out) != remote.Conflict {
		t.Fatalf("conflicting pull: %v %v", actions(out), err)
	}

	// rm removes the object and the entry, and nothing else did.
	if err := r.Remove(ctx, []string{id}); err != nil {
		t.Fatal(err)
	}
	ix, _, _ = r.ReadIndex(ctx)
	if len(ix.Sessions) != 0 || len(srv.Objects("bucket1", "team/sessions/sessions/")) != 0 {
		t.Fatalf("after rm: index %v", ix.Sessions)
	}
}

// killer kills the server once the n-th part is on its way: the server
// dies mid-push, as a crash or a lost network would leave it.
type killer struct {
	srv   *s3test.Server
	n     int32
	parts atomic.Int32
}

func (k *killer) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPut && req.URL.Query().Get("partNumber") != "" {
		if k.parts.Add(1) == k.n {
			k.srv.Kill()
		}
	}
	return http.DefaultTransport.RoundTrip(req)
}

func TestInterruptedPushResumes(t *testing.T) {
	srv := s3test.Start(t)
	srv.Bucket("bucket2")
	ctx := context.Background()
	a, b := t.TempDir(), t.TempDir()
	state := filepath.Join(a, "state")
	const id = "20261130T110000-0000000b"
	ref := writeSession(t, a, id, 4000, 4000, false) // about 16 MB: 4 parts
	size := func() int64 { fi, _ := os.Stat(ref.Path()); return fi.Size() }()

	k := &killer{srv: srv, n: 3}
	r := open(t, srv, "bucket2", state, k)
	if _, err := r.Push(ctx, []session.Ref{ref}, nil); err == nil {
		t.Fatal("the push went through a dead server")
	} else if !errors.Is(err, remote.ErrUnreachable) || strings.Contains(err.Error(), s3test.SecretKey) {
		t.Logf("error: %v", err)
	}
	srv.Restart()
	// Nothing partial is visible: no object, no index entry.
	if objs := srv.Objects("bucket2", ""); len(objs) != 0 {
		t.Fatalf("objects visible after the interrupted push: %v", keys(objs))
	}
	r2 := open(t, srv, "bucket2", state, nil)
	ix, _, err := r2.ReadIndex(ctx)
	if err != nil || len(ix.Sessions) != 0 {
		t.Fatalf("index after the interrupted push: %v %v", ix, err)
	}
	out, err := r2.Push(ctx, []session.Ref{ref}, nil)
	if err != nil || actions(out) != remote.Sent {
		t.Fatalf("resumed push: %v %v", actions(out), err)
	}
	if !strings.HasPrefix(out[0].Note, "resumed: 2 of 4 parts") || out[0].Bytes >= size {
		t.Fatalf("the push did not resume: %q, %d of %d bytes sent", out[0].Note, out[0].Bytes, size)
	}
	ix, _, _ = r2.ReadIndex(ctx)
	if _, err := r2.Pull(ctx, &session.Store{Dir: b}, ix, []string{id}, nil); err != nil {
		t.Fatal(err)
	}
	x, _ := os.ReadFile(ref.Path())
	y, _ := os.ReadFile(filepath.Join(b, id+".jsonl"))
	if !bytes.Equal(x, y) {
		t.Fatal("the session pulled after a resumed push differs")
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestFaults(t *testing.T) {
	srv := s3test.Start(t)
	srv.Bucket("bucket3")
	ctx := context.Background()
	bad, err := remote.Open(remote.Options{Name: "team", URL: "s3://bucket3/p", Endpoint: srv.Endpoint, PathStyle: true,
		Creds: remote.Credentials{AccessKey: s3test.AccessKey, SecretKey: "wrong-secret-value-123"}})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = bad.ReadIndex(ctx)
	if !errors.Is(err, remote.ErrCredentials) || strings.Contains(err.Error(), "wrong-secret-value-123") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("wrong credentials: %v", err)
	}
	missing := open(t, srv, "nobucket", "", nil)
	if _, _, err := missing.ReadIndex(ctx); !errors.Is(err, remote.ErrNoBucket) {
		t.Fatalf("missing bucket: %v", err)
	}
	if err := missing.Check(ctx); !errors.Is(err, remote.ErrNoBucket) {
		t.Fatalf("missing bucket, Check: %v", err)
	}
	srv.Kill()
	down := open(t, srv, "bucket3", "", nil)
	if _, _, err := down.ReadIndex(ctx); !errors.Is(err, remote.ErrUnreachable) {
		t.Fatalf("server down: %v", err)
	}
}

// TestIndexConditional: two pushers writing the index at once both land:
// the index is written on If-Match, read again when it changed.
func TestIndexConcurrent(t *testing.T) {
	srv := s3test.Start(t)
	srv.Bucket("bucket4")
	ctx := context.Background()
	dir := t.TempDir()
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		go func(i int) {
			id := fmt.Sprintf("20261130T12000%d-0000000%d", i, i)
			ref := writeSession(t, dir, id, 2, 5, false)
			_, err := open(t, srv, "bucket4", "", nil).Push(ctx, []session.Ref{ref}, nil)
			errs <- err
		}(i)
	}
	for i := 0; i < 8; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	ix, _, err := open(t, srv, "bucket4", "", nil).ReadIndex(ctx)
	if err != nil || len(ix.Sessions) != 8 {
		t.Fatalf("index holds %d of 8 sessions pushed at once (%v)", len(ix.Sessions), err)
	}
	_ = time.Second
}

// TestIndexForeign: an index that is not mecha's JSON (written by hand,
// damaged) is one error naming it once the retries that ride out a read
// racing a write are spent, never a crash or an empty team.
func TestIndexForeign(t *testing.T) {
	srv := s3test.Start(t)
	srv.Bucket("bucket6")
	ctx := context.Background()
	junk := []byte("{\"version\": 1, \"sessions\": {")
	if _, err := srv.Client().PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bucket6"), Key: aws.String("team/sessions/index.json"), Body: bytes.NewReader(junk)}); err != nil {
		t.Fatal(err)
	}
	_, _, err := open(t, srv, "bucket6", "", nil).ReadIndex(ctx)
	if err == nil || !strings.Contains(err.Error(), "index.json") || !strings.Contains(err.Error(), "not mecha's JSON") {
		t.Fatalf("a damaged index read as %v", err)
	}
}

// TestServerHonoursConditions: the guards push and the index rely on are
// enforced by the server: a PUT with If-None-Match: * over an object, and
// one with If-Match of a stale ETag, are refused (412); the control, the
// same PUT with no condition, goes through.
func TestServerHonoursConditions(t *testing.T) {
	srv := s3test.Start(t)
	srv.Bucket("bucket5")
	ctx := context.Background()
	c := srv.Client()
	put := func(body string, cond func(*s3.PutObjectInput)) (*s3.PutObjectOutput, error) {
		in := &s3.PutObjectInput{Bucket: aws.String("bucket5"), Key: aws.String("k"), Body: strings.NewReader(body)}
		if cond != nil {
			cond(in)
		}
		return c.PutObject(ctx, in)
	}
	code := func(err error) string {
		var ae smithy.APIError
		if errors.As(err, &ae) {
			return ae.ErrorCode()
		}
		return ""
	}
	first, err := put("one", func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := put("two", func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") }); code(err) != "PreconditionFailed" {
		t.Fatalf("If-None-Match: * over an object: %v", err)
	}
	if _, err := put("three", func(in *s3.PutObjectInput) { in.IfMatch = first.ETag }); err != nil {
		t.Fatalf("If-Match of the current ETag: %v", err)
	}
	if _, err := put("four", func(in *s3.PutObjectInput) { in.IfMatch = first.ETag }); code(err) != "PreconditionFailed" {
		t.Fatalf("If-Match of a stale ETag: %v", err)
	}
	if _, err := put("five", nil); err != nil {
		t.Fatalf("the control, no condition: %v", err)
	}
}
