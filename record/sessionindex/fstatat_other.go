//go:build !(linux && (amd64 || arm64 || riscv64 || ppc64 || ppc64le || s390x))

package sessionindex

import "golang.org/x/sys/unix"

// fstatat is unix.Fstatat(dirfd, name+suffix, st, 0).
func fstatat(dirfd int, name, suffix string, st *unix.Stat_t) error {
	return unix.Fstatat(dirfd, name+suffix, st, 0)
}
