package builtin

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkGrepTree searches this repository's own tree (about 600 files,
// 4.5 MB) with fs_grep, in process, and with grep -rnI over the same tree
// in the same run (a process each time, as the shell tool would start it):
//
//	go test -run='^$' -bench=GrepTree -count=6 ./engine/tool/builtin
//
// Each pattern matches fewer lines than fs_grep's default cap, so both
// read every file. The repository's .gitignore names test binaries only,
// so both search the same files; grep is told to skip .git.
func BenchmarkGrepTree(b *testing.B) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		b.Skipf("no module root at %s", root)
	}
	grep, err := exec.LookPath("grep")
	if err != nil {
		b.Skip("no grep")
	}
	ws, err := NewWorkspace(root)
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	cases := []struct {
		name, pattern string
		ignoreCase    bool
	}{
		{"literal", "func New", false},
		{"regexp", `Redact(or|Writer)\b`, false},
		{"ignore case", "checkpoint: private", true},
		{"no match", "zq[0-9]xv", false},
	}
	tl := NewFSGrep(ws, Options{})
	for _, c := range cases {
		in, _ := json.Marshal(map[string]any{"pattern": c.pattern, "ignore_case": c.ignoreCase})
		args := []string{"-rnI", "--exclude-dir=.git", "-E", "-e", c.pattern, "."}
		if c.ignoreCase {
			args = append([]string{"-i"}, args...)
		}
		b.Run("fs_grep/"+c.name, func(b *testing.B) {
			before := cpuTime(syscall.RUSAGE_SELF)
			for b.Loop() {
				res, err := tl.Run(context.Background(), in)
				if err != nil || res.IsError || strings.Contains(res.Content, "stopped at") {
					b.Fatalf("%+v, %v", res, err)
				}
			}
			reportCPU(b, cpuTime(syscall.RUSAGE_SELF)-before)
		})
		b.Run("grep/"+c.name, func(b *testing.B) {
			var cpu time.Duration
			for b.Loop() {
				cmd := exec.Command(grep, args...)
				cmd.Dir = root
				if err := cmd.Run(); err != nil && c.name != "no match" {
					b.Fatal(err)
				}
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}
			reportCPU(b, cpu)
		})
	}
}

// cpuTime is the user and system time of who (RUSAGE_SELF: this process).
func cpuTime(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per operation: on a shared machine it
// varies less than the wall time.
func reportCPU(b *testing.B, cpu time.Duration) {
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}
