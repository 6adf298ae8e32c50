package root_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mecha-agent/mecha/testkit/s3test"
)

// TestRemoteScripts runs the scripts of testdata/remote against a real S3
// server (Versity's gateway on loopback; skipped with the reason where it
// cannot be built), each script with a bucket of its own: S3_ENDPOINT,
// S3_BUCKET and the AWS keys are in its environment, and "s3dump FILE"
// writes every object of the bucket to FILE (key line, then content).
func TestRemoteScripts(t *testing.T) {
	srv := s3test.Start(t)
	var n atomic.Int32
	p := scriptParams(filepath.Join("testdata", "remote"), func(e *testscript.Env) error {
		bucket := fmt.Sprintf("script-%d", n.Add(1))
		srv.Bucket(bucket)
		e.Setenv("S3_ENDPOINT", srv.Endpoint)
		e.Setenv("S3_BUCKET", bucket)
		e.Setenv("AWS_ACCESS_KEY_ID", s3test.AccessKey)
		e.Setenv("AWS_SECRET_ACCESS_KEY", s3test.SecretKey)
		e.Setenv("S3_SECRET", s3test.SecretKey)
		e.Setenv("S3_KEY", s3test.AccessKey)
		return nil
	})
	p.Cmds["s3dump"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 1 {
			ts.Fatalf("usage: s3dump FILE")
		}
		objs := srv.Objects(ts.Getenv("S3_BUCKET"), "")
		var keys []string
		for k := range objs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&b, "== %s\n%s\n", k, objs[k])
		}
		ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(b.String()), 0o600))
	}
	testscript.Run(t, p)
}
