package remote

import "testing"

// TestPathStyle: buckets are addressed as minio-go's BucketLookupAuto
// (and BucketLookupPath, with path_style) addressed them.
func TestPathStyle(t *testing.T) {
	for _, c := range []struct {
		force, custom, secure bool
		host, bucket          string
		want                  bool
	}{
		{false, false, true, "s3.amazonaws.com", "team", false},          // AWS: BUCKET.s3...
		{false, false, true, "s3.amazonaws.com", "team.example", true},   // a dot over https: path
		{true, false, true, "s3.amazonaws.com", "team", true},            // path_style = true
		{false, true, false, "127.0.0.1:9000", "team", true},             // any other server: path
		{false, true, true, "minio.example.org", "team", true},           //
		{false, true, true, "s3.eu-west-1.amazonaws.com", "team", false}, // an AWS endpoint named
		{false, true, true, "S3.EU-WEST-1.AMAZONAWS.COM:443", "team", false},
		{false, true, true, "storage.googleapis.com", "team", false},
		{false, true, true, "oss-cn-hangzhou.aliyuncs.com", "team", false},
		{false, true, true, "s3.amazonaws.com.evil.example", "team", true},
		{true, true, true, "storage.googleapis.com", "team", true},
	} {
		if got := pathStyle(c.force, c.custom, c.secure, c.host, c.bucket); got != c.want {
			t.Errorf("pathStyle(%v, %v, %v, %q, %q) = %v, want %v", c.force, c.custom, c.secure, c.host, c.bucket, got, c.want)
		}
	}
}
