package sessionindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/mecha-agent/mecha/record/session"
)

// The store's directory is read with plain system calls: its entries with
// getdents64 into large buffers (names kept in them, not copied), each
// file's stat with fstatat relative to the directory, so that the kernel
// looks up one name rather than walking the whole path, and nothing is
// allocated per file. A listing of 100,000 sessions makes 100,000 of
// these calls, and they are most of its cost.

// openDir opens the directory and returns it with its stat; a missing
// directory is os.ErrNotExist.
func openDir(path string) (int, fileStat, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			if err == syscall.ENOENT {
				return -1, fileStat{}, os.ErrNotExist
			}
			return -1, fileStat{}, &os.PathError{Op: "open", Path: path, Err: err}
		}
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil {
			syscall.Close(fd)
			return -1, fileStat{}, &os.PathError{Op: "stat", Path: path, Err: err}
		}
		return fd, toFileStat(&st), nil
	}
}

func toFileStat(st *syscall.Stat_t) fileStat {
	return fileStat{size: st.Size, mtime: st.Mtim.Nano(), ino: int64(st.Ino), regular: st.Mode&syscall.S_IFMT == syscall.S_IFREG,
		dir: st.Mode&syscall.S_IFMT == syscall.S_IFDIR}
}

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

// statAt stats the entry name+suffix of the directory dirfd is open on,
// following a symbolic link as stat does.
func statAt(dirfd int, name, suffix string) fileStat {
	var st unix.Stat_t
	for {
		err := fstatat(dirfd, name, suffix, &st)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fileStat{err: err}
		}
		return fileStat{size: st.Size, mtime: st.Mtim.Nano(), ino: int64(st.Ino), regular: st.Mode&unix.S_IFMT == unix.S_IFREG,
			dir: st.Mode&unix.S_IFMT == unix.S_IFDIR}
	}
}
