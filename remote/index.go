package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Entry is one session in the index.
type Entry struct {
	ID        string    `json:"id"`
	Title     string    `json:"title,omitempty"`
	Kind      string    `json:"kind,omitempty"`
	Provider  string    `json:"provider,omitempty"`
	Model     string    `json:"model,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	Size      int64     `json:"size"`
	SHA256    string    `json:"sha256"`
	Lines     int       `json:"lines"`
	PushedAt  time.Time `json:"pushed_at"`
	PushedBy  string    `json:"pushed_by,omitempty"`
}

// Index is the index object: every session pushed, by id.
type Index struct {
	Version  int               `json:"version"`
	Sessions map[string]*Entry `json:"sessions"`
}

// Sorted returns the entries newest first (by creation, then id).
func (ix *Index) Sorted() []*Entry {
	out := make([]*Entry, 0, len(ix.Sessions))
	for _, e := range ix.Sessions {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.After(out[j].CreatedAt)
		}
		return out[i].ID > out[j].ID
	})
	return out
}

const indexName = "index.json"

// maxJSON bounds an object of mecha's own read whole (the index of a very
// large team included).
const maxJSON = 512 << 20

// getJSON reads a JSON object into v and returns its ETag ("" and
// ErrNotFound when there is none). A body that does not parse is read
// again a few times before it is called foreign: a server over a plain
// file system (Versity's posix backend, a MinIO on NFS) can serve an
// object that a concurrent PUT is still writing, which S3 itself never
// does; a corrupt object fails the same after the retries.
func (r *Remote) getJSON(ctx context.Context, name string, v any) (etag string, err error) {
	for attempt := 0; ; attempt++ {
		data, etag, err := r.getObject(ctx, name)
		if err != nil {
			return "", err
		}
		err = json.Unmarshal(data, v)
		if err == nil {
			return etag, nil
		}
		if attempt >= 4 {
			return "", &Error{Remote: r.Name, Op: "reading " + name, Detail: "not mecha's JSON: " + err.Error()}
		}
		select {
		case <-ctx.Done():
			return "", r.fail("reading "+name, ctx.Err())
		case <-time.After(time.Duration(20*(attempt+1)) * time.Millisecond):
		}
	}
}

// getObject reads an object of mecha's own whole, with its ETag.
func (r *Remote) getObject(ctx context.Context, name string) ([]byte, string, error) {
	out, err := r.c.GetObject(ctx, &s3.GetObjectInput{Bucket: &r.bucket, Key: aws.String(r.key(name))})
	if err != nil {
		if isNotFound(err) {
			return nil, "", ErrNotFound
		}
		return nil, "", r.fail("reading "+name, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(io.LimitReader(out.Body, maxJSON))
	if err != nil {
		return nil, "", r.fail("reading "+name, err)
	}
	return data, aws.ToString(out.ETag), nil
}

// putJSON writes v as a JSON object: over the object with ETag etag only,
// or, when etag is "", only where there is none (If-None-Match: *). A
// server that changed the object meanwhile answers ErrConflict.
func (r *Remote) putJSON(ctx context.Context, name string, v any, etag string) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	in := &s3.PutObjectInput{Bucket: &r.bucket, Key: aws.String(r.key(name)), Body: bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))), ContentType: aws.String("application/json")}
	condition(in, etag)
	_, err = r.c.PutObject(ctx, in)
	return r.fail("writing "+name, err)
}

// condition makes a PUT conditional: over the object with ETag etag only
// (If-Match), or, when etag is "", only where there is none
// (If-None-Match: *). The ETag is sent quoted, as S3 gives it, whether or
// not the server that gave it quoted it.
func condition(in *s3.PutObjectInput, etag string) {
	if etag == "" {
		in.IfNoneMatch = aws.String("*")
	} else {
		in.IfMatch = aws.String(`"` + strings.Trim(etag, `"`) + `"`)
	}
}

// ReadIndex reads the index: one request. A remote nobody pushed to has an
// empty one.
func (r *Remote) ReadIndex(ctx context.Context) (*Index, string, error) {
	ix := &Index{}
	etag, err := r.getJSON(ctx, indexName, ix)
	for i := 0; isConflict(err) && i < 5; i++ { // it changed while it was read
		ix = &Index{}
		etag, err = r.getJSON(ctx, indexName, ix)
	}
	if err == ErrNotFound || errors.Is(err, ErrNoBucket) {
		// No index: a remote nobody pushed to, or no bucket at all (said
		// as the check of the bucket says it).
		if err := r.Check(ctx); err != nil {
			return nil, "", err
		}
		return &Index{Version: 1, Sessions: map[string]*Entry{}}, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	if ix.Sessions == nil {
		ix.Sessions = map[string]*Entry{}
	}
	return ix, etag, nil
}

// updateJSON reads a JSON object, lets change change it and writes it back
// on the condition that nobody wrote it meanwhile, reading it again when
// somebody did. change reports whether there is anything to write.
func updateJSON[T any](ctx context.Context, r *Remote, name string, fresh func() *T, change func(*T) bool) error {
	for attempt := 0; ; attempt++ {
		v := fresh()
		etag, err := r.getJSON(ctx, name, v)
		if isConflict(err) && attempt < 20 { // it changed while it was read
			continue
		}
		if err != nil && err != ErrNotFound {
			return err
		}
		if !change(v) {
			return nil
		}
		err = r.putJSON(ctx, name, v, etag)
		if err == nil {
			return nil
		}
		if !isConflict(err) || attempt >= 20 {
			return err
		}
		time.Sleep(time.Duration(10*(attempt+1)) * time.Millisecond)
	}
}

func isConflict(err error) bool {
	e, ok := err.(*Error)
	return ok && e.Kind == ErrConflict
}

// updateIndex applies change to the index under a conditional write.
func (r *Remote) updateIndex(ctx context.Context, change func(*Index) bool) error {
	return updateJSON(ctx, r, indexName, func() *Index { return &Index{Version: 1, Sessions: map[string]*Entry{}} },
		func(ix *Index) bool {
			if ix.Sessions == nil {
				ix.Sessions = map[string]*Entry{}
			}
			ix.Version = 1
			return change(ix)
		})
}

// setEntries puts entries in the index, one write for them all.
func (r *Remote) setEntries(ctx context.Context, entries []*Entry) error {
	if len(entries) == 0 {
		return nil
	}
	err := r.updateIndex(ctx, func(ix *Index) bool {
		changed := false
		for _, e := range entries {
			if old := ix.Sessions[e.ID]; old == nil || old.SHA256 != e.SHA256 || old.Size != e.Size {
				ix.Sessions[e.ID] = e
				changed = true
			}
		}
		return changed
	})
	if err != nil {
		return fmt.Errorf("%w (the sessions are on the remote; the next push writes the index)", err)
	}
	return nil
}
