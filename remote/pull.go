package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/mecha-agent/mecha/internal/atomicfile"
	"github.com/mecha-agent/mecha/record/session"
)

// Select picks ids from the index: all of them, those created within
// since of now (since > 0), or each arg as an id or a unique prefix of one.
func (ix *Index) Select(args []string, all bool, since time.Duration, now time.Time) ([]string, error) {
	var out []string
	if all || since > 0 {
		for _, e := range ix.Sorted() {
			if since > 0 && e.CreatedAt.Before(now.Add(-since)) {
				continue
			}
			out = append(out, e.ID)
		}
		return out, nil
	}
	seen := map[string]bool{}
	for _, a := range args {
		id, err := ix.Resolve(a)
		if err != nil {
			return nil, err
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out, nil
}

// Resolve turns an id or a unique prefix of one into the id.
func (ix *Index) Resolve(arg string) (string, error) {
	if _, ok := ix.Sessions[arg]; ok {
		return arg, nil
	}
	var hits []string
	for id := range ix.Sessions {
		if arg != "" && strings.HasPrefix(id, arg) {
			hits = append(hits, id)
		}
	}
	switch len(hits) {
	case 1:
		return hits[0], nil
	case 0:
		return "", fmt.Errorf("%w: no session %q", ErrNotFound, arg)
	}
	sort.Strings(hits)
	return "", fmt.Errorf("session id %q is ambiguous on the remote: %s", arg, strings.Join(hits, ", "))
}

// Pull downloads each session named by ids into the store: a session the
// store lacks is written whole (mode 0600, atomically: never half a file);
// one the store holds a prefix of is replaced by the longer copy under its
// lock (never one being written); one the store holds more of is left
// ("ahead"); one neither side holds a prefix of is a conflict and left. The
// bytes written are the remote object's, checked against its SHA-256.
func (r *Remote) Pull(ctx context.Context, store *session.Store, ix *Index, ids []string, fn func(Outcome)) ([]Outcome, error) {
	if err := os.MkdirAll(store.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("remote %s: pull: %w", r.Name, err)
	}
	outs := make([]Outcome, len(ids))
	err := parallel(ctx, len(ids), func(i int) error {
		o, err := r.pullOne(ctx, store, ix, ids[i])
		outs[i] = o
		return err
	}, func(i int) {
		if fn != nil {
			fn(outs[i])
		}
	})
	if err != nil {
		return nil, err
	}
	return outs, nil
}

func (r *Remote) pullOne(ctx context.Context, store *session.Store, ix *Index, id string) (Outcome, error) {
	o := Outcome{ID: id}
	if !session.ValidID(id) {
		return o, &Error{Remote: r.Name, Op: "pull", Detail: fmt.Sprintf("the index names %q, which is not a session id", id)}
	}
	ref := session.Ref{Dir: store.Dir, ID: id}
	local, lerr := complete(ref.Path())
	if lerr != nil && !errors.Is(lerr, os.ErrNotExist) {
		return o, fmt.Errorf("remote %s: pull %s: %w", r.Name, id, lerr)
	}
	if e := ix.Sessions[id]; e != nil && lerr == nil && e.SHA256 == sum(local) && e.Size == int64(len(local)) {
		o.Action, o.Size = Unchanged, int64(len(local))
		return o, nil
	}
	data, err := r.download(ctx, id)
	if err != nil {
		return o, err
	}
	o.Bytes, o.Size = int64(len(data)), int64(len(data))
	if lerr == nil {
		switch {
		case bytes.Equal(local, data):
			o.Action = Unchanged
			return o, nil
		case bytes.HasPrefix(local, data):
			o.Action, o.Note = Ahead, fmt.Sprintf("the local session is longer (%d bytes, on %s %d): push it", len(local), r.Name, len(data))
			return o, nil
		case !bytes.HasPrefix(data, local):
			o.Action = Conflict
			o.Note = fmt.Sprintf("the local session (%d bytes) is not a prefix of the copy on %s (%d bytes); neither was changed", len(local), r.Name, len(data))
			return o, nil
		}
	}
	lock, err := store.Acquire(ref)
	var be *session.BusyError
	if errors.As(err, &be) {
		o.Action, o.Note = Busy, "the local session is being written; pull it when it is done"
		return o, nil
	}
	if err != nil {
		return o, fmt.Errorf("remote %s: pull %s: %w", r.Name, id, err)
	}
	defer lock.Release()
	// Under the lock, the local file must still be what was compared.
	now, nerr := os.ReadFile(ref.Path())
	if (lerr == nil) != (nerr == nil) || (nerr == nil && !bytes.HasPrefix(data, now)) {
		o.Action, o.Note = Busy, "the local session changed while it was pulled; nothing was written"
		return o, nil
	}
	if err := atomicfile.WriteFile(ref.Path(), data, 0o600); err != nil {
		return o, fmt.Errorf("remote %s: pull %s: %w", r.Name, id, err)
	}
	o.Action = Received
	if lerr == nil {
		o.Action = Updated
	}
	return o, nil
}

// download reads a session object whole and checks it against its
// checksum.
func (r *Remote) download(ctx context.Context, id string) ([]byte, error) {
	key := r.sessionKey(id)
	obj, err := r.c.GetObject(ctx, &s3.GetObjectInput{Bucket: &r.bucket, Key: &key})
	if err != nil {
		return nil, r.fail("pull "+id, err)
	}
	defer obj.Body.Close()
	var buf bytes.Buffer
	buf.Grow(int(max(aws.ToInt64(obj.ContentLength), 0)))
	if _, err := buf.ReadFrom(obj.Body); err != nil {
		return nil, r.fail("pull "+id, err)
	}
	data := buf.Bytes()
	if want := metaValue(obj.Metadata, metaSHA); want != "" && want != sum(data) {
		return nil, &Error{Remote: r.Name, Op: "pull " + id, Detail: "the object does not match its checksum: nothing was written"}
	}
	return data, nil
}

// Remove deletes sessions from the remote, objects first, then their
// index entries in one write. It is the only deletion of sessions.
func (r *Remote) Remove(ctx context.Context, ids []string) error {
	for _, id := range ids {
		if _, err := r.c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &r.bucket, Key: aws.String(r.sessionKey(id))}); err != nil {
			return r.fail("rm "+id, err)
		}
	}
	return r.updateIndex(ctx, func(ix *Index) bool {
		changed := false
		for _, id := range ids {
			if _, ok := ix.Sessions[id]; ok {
				delete(ix.Sessions, id)
				changed = true
			}
		}
		return changed
	})
}
