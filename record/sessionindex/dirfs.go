package sessionindex

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
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
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			syscall.Close(fd)
			return -1, fileStat{}, &os.PathError{Op: "stat", Path: path, Err: err}
		}
		return fd, toFileStat(&st), nil
	}
}

// toFileStat is a stat's fields the index compares (x/sys/unix's Stat_t
// names the mtime Mtim on every system it has one).
func toFileStat(st *unix.Stat_t) fileStat {
	return fileStat{size: st.Size, mtime: st.Mtim.Nano(), ino: int64(st.Ino), regular: st.Mode&unix.S_IFMT == unix.S_IFREG,
		dir: st.Mode&unix.S_IFMT == unix.S_IFDIR}
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
