package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// cachedTrial returns the namespace trial's result, running it only when
// no result is kept for this boot of the kernel, this user and this
// build of mecha: the trial starts mecha's executable once more, which
// would nearly double the cost of a one-call process ("mecha tool call").
// The result is kept in the user's cache directory (~/.cache/mecha),
// which no other user can write; without one the trial runs every time.
// A stale "yes" cannot weaken anything: a helper that then cannot build
// its view fails closed and says why.
func cachedTrial(trial func() bool) bool {
	key := trialKey()
	dir, err := os.UserCacheDir()
	if key == "" || err != nil {
		return trial()
	}
	file := filepath.Join(dir, "mecha", "sandbox-namespaces")
	if b, err := os.ReadFile(file); err == nil {
		if k, v, ok := strings.Cut(strings.TrimSpace(string(b)), " => "); ok && k == key {
			return v == "yes"
		}
	}
	ok := trial()
	v := "no"
	if ok {
		v = "yes"
	}
	if os.MkdirAll(filepath.Dir(file), 0o700) == nil {
		tmp := fmt.Sprintf("%s.%d", file, os.Getpid())
		if os.WriteFile(tmp, []byte(key+" => "+v+"\n"), 0o600) == nil {
			_ = os.Rename(tmp, file)
		}
		_ = os.Remove(tmp)
	}
	return ok
}

// trialKey names what the trial's result holds for: the kernel's boot,
// the user, and mecha's executable (path, size, modification time); ""
// when any is unknown.
func trialKey() string {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("boot %s uid %d exe %s %d %d", strings.TrimSpace(string(boot)), os.Getuid(), exe, fi.Size(), fi.ModTime().UnixNano())
}
