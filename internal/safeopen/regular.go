// Package regular opens the files mecha reads (transcripts, config.toml,
// learned rules, pin files, scripts) so that a file of the wrong kind
// cannot hang or exhaust the process: the open never waits (a FIFO with no
// writer would block open(2) until one came, deaf to SIGTERM), and what was
// opened is checked with fstat on the descriptor, so a file swapped between
// a check and the open cannot slip through. Anything but a regular file
// (after symlinks are followed) is refused with ErrNotRegular: FIFOs,
// sockets, devices such as /dev/zero, directories.
package safeopen

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrNotRegular is the error (inside an *os.PathError) for a file that is
// not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is the error (inside an *os.PathError) of ReadFile for a file
// larger than its limit.
var ErrTooLarge = errors.New("file too large")

// OpenFD opens path for reading with plain system calls and returns the
// descriptor and its fstat (x/sys/unix's, the same fields on every system). The open is non-blocking (which changes nothing
// for a regular file); a file that is not regular is closed again and
// refused. Callers that read many small files use it to stay off the
// runtime poller; the rest use Open.
func OpenFD(path string) (int, unix.Stat_t, error) {
	var st unix.Stat_t
	fd, err := retry(func() (int, error) {
		return syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	})
	if err != nil {
		return -1, st, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if _, err := retry(func() (int, error) { return 0, unix.Fstat(fd, &st) }); err != nil {
		syscall.Close(fd)
		return -1, st, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		syscall.Close(fd)
		return -1, st, &os.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, Kind(uint32(st.Mode)))}
	}
	return fd, st, nil
}

// Open opens path for reading as OpenFD does and returns it as an
// *os.File, in blocking mode.
func Open(path string) (*os.File, error) {
	fd, _, err := OpenFD(path)
	if err != nil {
		return nil, err
	}
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// ReadFile reads the whole regular file at path, refusing one of more than
// max bytes (ErrTooLarge) without reading past the limit.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f, path, max)
}

// ReadFileIn is ReadFile for a file named inside root: the name is
// resolved by os.Root, so a symbolic link that leads out of the root is
// refused (as are ".." steps out of it), and what was opened is checked as
// Open checks it.
func ReadFileIn(root *os.Root, name string, max int64) ([]byte, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &os.PathError{Op: "open", Path: name, Err: fmt.Errorf("%w (%s)", ErrNotRegular, Kind(uint32(st.Sys().(*syscall.Stat_t).Mode)))}
	}
	return readAll(f, name, max)
}

// readAll reads f whole, refusing more than max bytes.
func readAll(f *os.File, path string, max int64) ([]byte, error) {
	var size int64
	if st, err := f.Stat(); err == nil {
		size = st.Size()
	}
	if size > max {
		return nil, &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: %d bytes, more than %d", ErrTooLarge, size, max)}
	}
	// The file may grow after the stat: read one byte past the limit to know.
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: more than %d bytes", ErrTooLarge, max)}
	}
	return b, nil
}

// Kind names the type of file a mode is, as a note would.
func Kind(mode uint32) string {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		return "a regular file"
	case syscall.S_IFDIR:
		return "a directory"
	case syscall.S_IFIFO:
		return "a named pipe"
	case syscall.S_IFSOCK:
		return "a socket"
	case syscall.S_IFCHR:
		return "a character device"
	case syscall.S_IFBLK:
		return "a block device"
	}
	return "not a file"
}

func retry(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if err != syscall.EINTR {
			return n, err
		}
	}
}
