package blobs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestPutGet: a content is stored once under its SHA-256 and read back
// byte for byte; a blob changed on disk since is refused, and one never
// stored is ErrMissing.
func TestPutGet(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	data := []byte("bytes\x00\xff\r\n")
	sum, err := s.Put(data)
	if err != nil || sum != Sum(data) {
		t.Fatalf("Put: %s, %v", sum, err)
	}
	if again, err := s.Put(data); err != nil || again != sum {
		t.Fatalf("Put again: %s, %v", again, err)
	}
	got, err := s.Get(sum)
	if err != nil || string(got) != string(data) {
		t.Fatalf("Get: %q, %v", got, err)
	}
	p := filepath.Join(s.Dir, "sha256", sum[:2], sum[2:])
	if err := os.WriteFile(p, []byte("other!!!!!!"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(sum); err == nil {
		t.Error("a blob changed on disk was read back")
	}
	if _, err := s.Get(Sum([]byte("never"))); !errors.Is(err, ErrMissing) {
		t.Errorf("a blob never stored: %v", err)
	}
	if _, err := s.Get("../../etc/passwd"); err == nil {
		t.Error("a name that is not a hash was read")
	}
}
