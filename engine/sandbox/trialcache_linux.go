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
// The results are kept in the user's cache directory (~/.cache/mecha),
// which no other user can write, one line per key and the last
// trialKeep keys (two builds used in turn, an installed mecha and one
// being built, keep their own); without one the trial runs every time.
// A trial that did not finish (definite false: the machine was too busy
// for its timeout) is not kept. A stale "yes" cannot weaken anything: a
// helper that then cannot build its view fails closed and says why.
func cachedTrial(trial func() (ok, definite bool)) bool {
	key := trialKey()
	dir, err := os.UserCacheDir()
	if key == "" || err != nil {
		ok, _ := trial()
		return ok
	}
	file := filepath.Join(dir, "mecha", "sandbox-namespaces")
	var kept []string
	if b, err := os.ReadFile(file); err == nil {
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			k, v, ok := strings.Cut(strings.TrimSpace(line), " => ")
			if !ok {
				continue
			}
			if k == key {
				return v == "yes"
			}
			kept = append(kept, line)
		}
	}
	ok, definite := trial()
	if !definite {
		return ok
	}
	v := "no"
	if ok {
		v = "yes"
	}
	kept = append(kept, key+" => "+v)
	if len(kept) > trialKeep {
		kept = kept[len(kept)-trialKeep:]
	}
	if os.MkdirAll(filepath.Dir(file), 0o700) == nil {
		tmp := fmt.Sprintf("%s.%d", file, os.Getpid())
		if os.WriteFile(tmp, []byte(strings.Join(kept, "\n")+"\n"), 0o600) == nil {
			_ = os.Rename(tmp, file)
		}
		_ = os.Remove(tmp)
	}
	return ok
}

// trialKeep is how many keys' results the trial's cache keeps.
const trialKeep = 8

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
