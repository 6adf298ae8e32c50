package remote

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"golang.org/x/sync/errgroup"

	"github.com/mecha-agent/mecha/record/session"
)

// What a push or a pull did with one session.
const (
	Sent       = "pushed"     // the remote had none
	Updated    = "updated"    // the remote had a prefix of it: it grew
	Unchanged  = "unchanged"  // both hold the same bytes: nothing moved
	Ahead      = "ahead"      // the other side holds more: pull (or push) it
	Conflict   = "conflict"   // neither is a prefix of the other: nothing written
	Incomplete = "incomplete" // no complete line yet
	Received   = "pulled"     // a pull wrote a new session
	Busy       = "busy"       // the local session is being written: not replaced
)

// Outcome is what happened to one session.
type Outcome struct {
	ID     string
	Action string
	// Bytes is what crossed the network for the session's body (a part
	// reused by a resumed upload counts nothing).
	Bytes int64
	// Size is the session's size on the side it went to.
	Size int64
	// Note says more, in one line (a conflict's sizes, the parts resumed).
	Note string
}

// metaSHA is the user metadata key of a session object's checksum.
const metaSHA = "Mecha-Sha256"

// metaValue is the user metadata value of key: the SDK gives the keys as
// the server sent them (lower case, from most), so it is looked up
// without regard to case.
func metaValue(m map[string]string, key string) string {
	if v, ok := m[key]; ok {
		return v
	}
	for k, v := range m {
		if strings.EqualFold(k, key) {
			return v
		}
	}
	return ""
}

// complete reads a session file up to its last complete line.
func complete(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return data[:bytes.LastIndexByte(data, '\n')+1], nil
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Push uploads each session of refs (see the package doc): unchanged ones
// move nothing (their checksum is in the index: no request is made for
// them), grown ones are uploaded whole over the prefix the remote had, and
// a remote copy that is not a prefix of the local file is a conflict and
// stays as it is. The index is written once, at the end. fn, when not nil,
// hears of each session as it is done.
func (r *Remote) Push(ctx context.Context, refs []session.Ref, fn func(Outcome)) ([]Outcome, error) {
	ix, _, err := r.ReadIndex(ctx)
	if err != nil {
		return nil, err
	}
	outs := make([]Outcome, len(refs))
	entries := make([]*Entry, len(refs))
	err = parallel(ctx, len(refs), func(i int) error {
		o, e, err := r.pushOne(ctx, ix, refs[i])
		if err != nil {
			return err
		}
		outs[i], entries[i] = o, e
		return nil
	}, func(i int) {
		if fn != nil {
			fn(outs[i])
		}
	})
	var done []*Entry
	for _, e := range entries {
		if e != nil {
			done = append(done, e)
		}
	}
	if werr := r.setEntries(ctx, done); err == nil {
		err = werr
	}
	if err != nil {
		return nil, err
	}
	return outs, nil
}

// Workers is how many sessions a push or a pull moves at once.
const Workers = 4

// parallel runs do(0..n-1) on Workers goroutines, calling done(i) (one at
// a time) after each that succeeded; it stops at the first error and
// returns it.
func parallel(ctx context.Context, n int, do func(i int) error, done func(i int)) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(Workers)
	var mu sync.Mutex
	for i := 0; i < n; i++ {
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if err := do(i); err != nil {
				return err
			}
			mu.Lock()
			done(i)
			mu.Unlock()
			return nil
		})
	}
	return g.Wait()
}

// pushOne pushes one session and returns the index entry to write (nil
// when the index needs none).
func (r *Remote) pushOne(ctx context.Context, ix *Index, ref session.Ref) (Outcome, *Entry, error) {
	o := Outcome{ID: ref.ID}
	data, err := complete(ref.Path())
	if err != nil {
		return o, nil, fmt.Errorf("remote %s: push %s: %w", r.Name, ref.ID, err)
	}
	if len(data) == 0 {
		o.Action = Incomplete
		return o, nil, nil
	}
	local := sum(data)
	o.Size = int64(len(data))
	if e := ix.Sessions[ref.ID]; e != nil && e.SHA256 == local && e.Size == int64(len(data)) {
		o.Action = Unchanged
		return o, nil, nil
	}
	key := r.sessionKey(ref.ID)
	st, err := r.c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &r.bucket, Key: &key})
	etag := ""
	switch {
	case isNotFound(err):
		o.Action = Sent
	case err != nil:
		return o, nil, r.fail("push "+ref.ID, err)
	default:
		remoteSum, err := r.objectSum(ctx, key, st.Metadata)
		if err != nil {
			return o, nil, err
		}
		rs := aws.ToInt64(st.ContentLength)
		switch {
		case rs == int64(len(data)) && remoteSum == local:
			o.Action = Unchanged
			return o, r.entry(ref, data, local), nil
		case rs < int64(len(data)) && sum(data[:rs]) == remoteSum:
			o.Action, etag = Updated, aws.ToString(st.ETag)
		case rs > int64(len(data)):
			prefix, err := r.readRange(ctx, key, int64(len(data)))
			if err != nil {
				return o, nil, err
			}
			if bytes.Equal(prefix, data) {
				o.Action, o.Note = Ahead, fmt.Sprintf("the copy on %s is longer (%d bytes, here %d): pull it", r.Name, rs, len(data))
				return o, nil, nil
			}
			fallthrough
		default:
			o.Action = Conflict
			o.Note = fmt.Sprintf("the copy on %s (%d bytes) is not a prefix of the local session (%d bytes); neither was changed", r.Name, rs, len(data))
			return o, nil, nil
		}
	}
	n, note, err := r.upload(ctx, ref.ID, key, data, local, etag)
	o.Bytes, o.Note = n, note
	if isConflict(err) {
		o.Action, o.Note = Conflict, fmt.Sprintf("the copy on %s changed while it was pushed; nothing was overwritten", r.Name)
		return o, nil, nil
	}
	if err != nil {
		return o, nil, err
	}
	return o, r.entry(ref, data, local), nil
}

// entry is the index entry of a session pushed as data.
func (r *Remote) entry(ref session.Ref, data []byte, sha string) *Entry {
	e := &Entry{ID: ref.ID, Size: int64(len(data)), SHA256: sha, Lines: bytes.Count(data, []byte{'\n'}), PushedAt: r.now().UTC(), PushedBy: r.who}
	if m, err := session.PeekMeta(ref.Path()); err == nil {
		e.Title, e.Kind, e.Provider, e.Model, e.CreatedAt = m.Title, session.Kind(&m), m.Provider, m.Model, m.CreatedAt
	}
	return e
}

// objectSum is a session object's SHA-256: from its metadata, else (an
// object mecha did not write) computed from its bytes.
func (r *Remote) objectSum(ctx context.Context, key string, meta map[string]string) (string, error) {
	if s := metaValue(meta, metaSHA); s != "" {
		return s, nil
	}
	data, err := r.readRange(ctx, key, -1)
	if err != nil {
		return "", err
	}
	return sum(data), nil
}

// readRange reads the first n bytes of an object (n < 0: all of it).
func (r *Remote) readRange(ctx context.Context, key string, n int64) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	in := &s3.GetObjectInput{Bucket: &r.bucket, Key: &key}
	if n > 0 {
		in.Range = aws.String(fmt.Sprintf("bytes=0-%d", n-1))
	}
	obj, err := r.c.GetObject(ctx, in)
	if err != nil {
		return nil, r.fail("reading "+key, err)
	}
	defer obj.Body.Close()
	data, err := io.ReadAll(obj.Body)
	if err != nil {
		return nil, r.fail("reading "+key, err)
	}
	return data, nil
}

// upload writes a session object: in one PUT (on the condition that the
// object is still the one with etag, or that there is none when etag is
// ""), or in parts when it is larger than a part.
func (r *Remote) upload(ctx context.Context, id, key string, data []byte, sha, etag string) (int64, string, error) {
	if int64(len(data)) > r.partSize {
		return r.uploadParts(ctx, id, key, data, sha)
	}
	h := md5.Sum(data)
	in := &s3.PutObjectInput{Bucket: &r.bucket, Key: &key, Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data))),
		ContentType: aws.String("application/x-ndjson"), Metadata: map[string]string{metaSHA: sha},
		ContentMD5: aws.String(base64.StdEncoding.EncodeToString(h[:]))}
	condition(in, etag)
	if _, err := r.c.PutObject(ctx, in); err != nil {
		return 0, "", r.fail("push "+id, err)
	}
	return int64(len(data)), "", nil
}
