package remote

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// pinsDoc is the pins object: the regression suite, in order.
type pinsDoc struct {
	Pins []string `json:"pins"`
}

const pinsName = "pins.json"

// Pins reads the suite's pins (none when nobody pinned one).
func (r *Remote) Pins(ctx context.Context) ([]string, error) {
	var p pinsDoc
	_, err := r.getJSON(ctx, pinsName, &p)
	if err == ErrNotFound {
		return nil, nil
	}
	return p.Pins, err
}

// AddPin appends id to the pins (a conditional write, retried when another
// machine pinned meanwhile); added is false when it was pinned already.
func (r *Remote) AddPin(ctx context.Context, id string) (added bool, err error) {
	err = updateJSON(ctx, r, pinsName, func() *pinsDoc { return &pinsDoc{} }, func(p *pinsDoc) bool {
		added = !slices.Contains(p.Pins, id)
		if added {
			p.Pins = append(p.Pins, id)
		}
		return added
	})
	return added, err
}

// ValidRun reports whether a run id can name objects: letters, digits,
// '.', '_' and '-', at most 128.
func ValidRun(run string) bool {
	if run == "" || len(run) > 128 || run == "." || run == ".." {
		return false
	}
	for _, c := range run {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func shardName(run string, i, n int) string {
	return fmt.Sprintf("runs/%s/shard-%d-of-%d.json", run, i, n)
}

// PutShard writes one shard's results of run (over an earlier try of the
// same shard: a retried CI job replaces its own results).
func (r *Remote) PutShard(ctx context.Context, run string, i, n int, results []byte) error {
	name := shardName(run, i, n)
	_, err := r.c.PutObject(ctx, &s3.PutObjectInput{Bucket: &r.bucket, Key: aws.String(r.key(name)), Body: bytes.NewReader(results),
		ContentLength: aws.Int64(int64(len(results))), ContentType: aws.String("application/json")})
	return r.fail("writing "+name, err)
}

// Shard is one shard's results as written.
type Shard struct {
	I, N int
	Data []byte
}

// Shards reads every shard of run, in shard order.
func (r *Remote) Shards(ctx context.Context, run string) ([]Shard, error) {
	prefix := r.key("runs/" + run + "/")
	var out []Shard
	pages := s3.NewListObjectsV2Paginator(r.c, &s3.ListObjectsV2Input{Bucket: &r.bucket, Prefix: &prefix})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, r.fail("listing run "+run, err)
		}
		for _, o := range page.Contents {
			key := aws.ToString(o.Key)
			var s Shard
			if _, err := fmt.Sscanf(strings.TrimPrefix(key, prefix), "shard-%d-of-%d.json", &s.I, &s.N); err != nil {
				continue
			}
			obj, err := r.c.GetObject(ctx, &s3.GetObjectInput{Bucket: &r.bucket, Key: &key})
			if err != nil {
				return nil, r.fail("reading "+key, err)
			}
			s.Data, err = io.ReadAll(io.LimitReader(obj.Body, maxJSON))
			obj.Body.Close()
			if err != nil {
				return nil, r.fail("reading "+key, err)
			}
			out = append(out, s)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].I < out[b].I })
	return out, nil
}
