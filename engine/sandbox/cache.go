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
// A trial that did not finish (definite false: the machine was too busy
// for its timeout) is not kept. A stale "yes" cannot weaken anything: a
// helper that then cannot build its view fails closed and says why.
func cachedTrial(trial func() (ok bool, why string, definite bool)) (bool, string) {
	return cachedAnswer("sandbox-namespaces", trialKey(), trial)
}

// cachedAnswer returns compute's answer for key, kept in the user's cache
// directory (~/.cache/mecha/NAME), which no other user can write, one line
// per key and the last trialKeep keys (two builds used in turn, an
// installed mecha and one being built, keep their own); without a key or a
// cache directory compute runs every time, and an answer it says is not
// definite is not kept. A "no" keeps its why (one line of it).
func cachedAnswer(name, key string, compute func() (ok bool, why string, definite bool)) (bool, string) {
	dir, err := os.UserCacheDir()
	if key == "" || err != nil {
		ok, why, _ := compute()
		return ok, why
	}
	file := filepath.Join(dir, "mecha", name)
	var kept []string
	if b, err := os.ReadFile(file); err == nil {
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			k, v, ok := strings.Cut(strings.TrimSpace(line), " => ")
			if !ok {
				continue
			}
			if k == key {
				if v == "yes" {
					return true, ""
				}
				return false, strings.TrimSpace(strings.TrimPrefix(v, "no"))
			}
			kept = append(kept, line)
		}
	}
	ok, why, definite := compute()
	if !definite {
		return ok, why
	}
	v := "yes"
	if !ok {
		v = strings.TrimSpace("no " + oneLine(why))
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
	return ok, why
}

// oneLine is s on one line, at most 300 bytes: a why kept in a cache file.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}

// trialKeep is how many keys' results the trial's cache keeps.
const trialKeep = 8

// trialKey names what the trial's result holds for: the kernel's boot,
// the user, and mecha's executable; "" when any is unknown.
func trialKey() string {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	k := exeKey(exe)
	if k == "" {
		return ""
	}
	return fmt.Sprintf("boot %s uid %d %s", strings.TrimSpace(string(boot)), os.Getuid(), k)
}

// exeKey names a build of an executable: its path, size and modification
// time; "" when it cannot be read.
func exeKey(exe string) string {
	fi, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("exe %s %d %d", exe, fi.Size(), fi.ModTime().UnixNano())
}
