// Package blobs is the content-addressed store of file contents mecha
// keeps beside its sessions ($MECHA_HOME/blobs): the content a file had
// before fs_write or fs_edit replaced it, under the SHA-256 of its bytes,
// so that a rewind can put it back byte for byte. A blob is written once
// and never changed; the same content is stored once however many calls
// name it.
package blobs

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mecha-agent/mecha/internal/atomicfile"
	"github.com/mecha-agent/mecha/internal/safeopen"
)

// MaxBlob bounds a blob read back.
const MaxBlob = 1 << 30

// Store is the blobs under Dir ($MECHA_HOME/blobs).
type Store struct{ Dir string }

// Sum is the hex SHA-256 of data, the name it is stored under.
func Sum(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// path is where the blob sum is: sha256/ab/cdef....
func (s Store) path(sum string) (string, error) {
	if len(sum) != 64 {
		return "", fmt.Errorf("blobs: %q is not a SHA-256", sum)
	}
	if _, err := hex.DecodeString(sum); err != nil {
		return "", fmt.Errorf("blobs: %q is not a SHA-256", sum)
	}
	return filepath.Join(s.Dir, "sha256", sum[:2], sum[2:]), nil
}

// Put stores data and returns its sum.
func (s Store) Put(data []byte) (string, error) {
	sum := Sum(data)
	p, err := s.path(sum)
	if err != nil {
		return "", err
	}
	if old, err := safeopen.ReadFile(p, MaxBlob); err == nil && Sum(old) == sum {
		return sum, nil // stored already (and whole)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", fmt.Errorf("blobs: %w", err)
	}
	if err := atomicfile.WriteFile(p, data, 0o600); err != nil {
		return "", fmt.Errorf("blobs: %w", err)
	}
	return sum, nil
}

// ErrMissing is the error of Get for a blob the store does not hold.
var ErrMissing = errors.New("blobs: not in the store")

// Get reads the blob sum back, checked against its sum.
func (s Store) Get(sum string) ([]byte, error) {
	p, err := s.path(sum)
	if err != nil {
		return nil, err
	}
	data, err := safeopen.ReadFile(p, MaxBlob)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrMissing, sum)
	}
	if err != nil {
		return nil, fmt.Errorf("blobs: %w", err)
	}
	if Sum(data) != sum {
		return nil, fmt.Errorf("blobs: %s does not hold the content of its name (changed since it was stored)", p)
	}
	return data, nil
}
