package sessionindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"unsafe"

	"github.com/mecha-agent/mecha/record/session"
)

// dirNames returns the names of the .jsonl entries of the directory dirfd
// is open on, as strings sharing the buffers they were read into.
func dirNames(dirfd int) ([]string, error) {
	var names []string
	for {
		buf := make([]byte, 256<<10)
		n, err := syscall.Getdents(dirfd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("session: reading the store: %w", err)
		}
		if n <= 0 {
			return names, nil
		}
		b := buf[:n]
		for len(b) >= 19 {
			// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				return nil, errors.New("session: reading the store: a malformed directory entry")
			}
			name := b[19:reclen]
			for i, c := range name {
				if c == 0 {
					name = name[:i]
					break
				}
			}
			if len(name) > len(session.Ext) && strings.HasSuffix(unsafe.String(unsafe.SliceData(name), len(name)), session.Ext) {
				names = append(names, unsafe.String(unsafe.SliceData(name), len(name)))
			}
			b = b[reclen:]
		}
	}
}
