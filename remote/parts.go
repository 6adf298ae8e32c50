package remote

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/mecha-agent/mecha/internal/atomicfile"
)

// upState is what a push keeps of a multipart upload it started, so that
// a push interrupted mid-way resumes it: the upload and what it uploads.
type upState struct {
	Key      string `json:"key"`
	UploadID string `json:"upload_id"`
	Size     int64  `json:"size"`
	SHA256   string `json:"sha256"`
	PartSize int64  `json:"part_size"`
}

func (r *Remote) statePath(id string) string {
	if r.stateDir == "" {
		return ""
	}
	return filepath.Join(r.stateDir, r.Name, id+".json")
}

func (r *Remote) loadState(id string) *upState {
	p := r.statePath(id)
	if p == "" {
		return nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	var s upState
	if json.Unmarshal(b, &s) != nil {
		return nil
	}
	return &s
}

func (r *Remote) saveState(id string, s *upState) error {
	p := r.statePath(id)
	if p == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	b, _ := json.Marshal(s)
	return atomicfile.WriteFile(p, b, 0o600)
}

func (r *Remote) dropState(id string) {
	if p := r.statePath(id); p != "" {
		_ = os.Remove(p)
	}
}

// uploadParts uploads data in parts of r.partSize. An upload this machine
// started for the same bytes and left unfinished is resumed: each part
// the server holds whose MD5 (its ETag) matches the local part is kept,
// the others are sent. Nothing is visible under key until every part is
// in and the upload is completed.
func (r *Remote) uploadParts(ctx context.Context, id, key string, data []byte, sha string) (int64, string, error) {
	want := &upState{Key: key, Size: int64(len(data)), SHA256: sha, PartSize: r.partSize}
	have := map[int32]types.Part{}
	st := r.loadState(id)
	resumed := false
	if st != nil && st.Key == key && st.Size == want.Size && st.SHA256 == sha && st.PartSize == r.partSize {
		parts, err := r.listParts(ctx, key, st.UploadID)
		if err == nil {
			want.UploadID, resumed = st.UploadID, true
			for _, p := range parts {
				have[aws.ToInt32(p.PartNumber)] = p
			}
		}
	} else if st != nil && st.UploadID != "" {
		// An upload of other bytes (the session grew since): it will never
		// be completed; it holds no session and is not visible.
		_, _ = r.c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &r.bucket, Key: aws.String(st.Key), UploadId: aws.String(st.UploadID)})
	}
	if want.UploadID == "" {
		up, err := r.c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &r.bucket, Key: &key,
			ContentType: aws.String("application/x-ndjson"), Metadata: map[string]string{metaSHA: sha}})
		if err != nil {
			return 0, "", r.fail("push "+id, err)
		}
		want.UploadID = aws.ToString(up.UploadId)
		if err := r.saveState(id, want); err != nil {
			return 0, "", fmt.Errorf("remote %s: push %s: keeping the upload's state: %w", r.Name, id, err)
		}
	}
	var sent int64
	var done []types.CompletedPart
	kept := 0
	for n, off := int32(1), int64(0); off < int64(len(data)); n, off = n+1, off+r.partSize {
		end := min(off+r.partSize, int64(len(data)))
		part := data[off:end]
		h := md5.Sum(part)
		md5hex := hex.EncodeToString(h[:])
		if p, ok := have[n]; ok && aws.ToInt64(p.Size) == int64(len(part)) && strings.Trim(aws.ToString(p.ETag), `"`) == md5hex {
			done = append(done, types.CompletedPart{PartNumber: aws.Int32(n), ETag: p.ETag})
			kept++
			continue
		}
		p, err := r.c.UploadPart(ctx, &s3.UploadPartInput{Bucket: &r.bucket, Key: &key, UploadId: &want.UploadID, PartNumber: aws.Int32(n),
			Body: bytes.NewReader(part), ContentLength: aws.Int64(int64(len(part))), ContentMD5: aws.String(base64.StdEncoding.EncodeToString(h[:]))})
		if err != nil {
			return sent, "", r.fail(fmt.Sprintf("push %s: part %d", id, n), err)
		}
		sent += int64(len(part))
		done = append(done, types.CompletedPart{PartNumber: aws.Int32(n), ETag: p.ETag})
	}
	if _, err := r.c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: &r.bucket, Key: &key, UploadId: &want.UploadID,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: done}}); err != nil {
		return sent, "", r.fail("push "+id+": completing the upload", err)
	}
	r.dropState(id)
	note := fmt.Sprintf("%d parts", len(done))
	if resumed {
		note = fmt.Sprintf("resumed: %d of %d parts were already on %s", kept, len(done), r.Name)
	}
	return sent, note, nil
}

// listParts lists every part of an upload.
func (r *Remote) listParts(ctx context.Context, key, uploadID string) ([]types.Part, error) {
	var out []types.Part
	var marker *string
	for {
		res, err := r.c.ListParts(ctx, &s3.ListPartsInput{Bucket: &r.bucket, Key: &key, UploadId: &uploadID,
			PartNumberMarker: marker, MaxParts: aws.Int32(1000)})
		if err != nil {
			return nil, err
		}
		out = append(out, res.Parts...)
		if !aws.ToBool(res.IsTruncated) || res.NextPartNumberMarker == nil {
			return out, nil
		}
		marker = res.NextPartNumberMarker
	}
}
