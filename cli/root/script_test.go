package root_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mecha-agent/mecha/cli/backfill"
	"github.com/mecha-agent/mecha/cli/root"
	"github.com/mecha-agent/mecha/engine/sandbox"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/testkit/fakellm"
	"github.com/mecha-agent/mecha/testkit/mcpproxytest"
	"github.com/mecha-agent/mecha/testkit/mcptest"
	"github.com/mecha-agent/mecha/testkit/proctest"
	"github.com/mecha-agent/mecha/testkit/sandboxtest"
)

var update = flag.Bool("update", false, "rewrite the golden files of the scripts in testdata/script, and docs/manual (TestManual)")

// TestMain makes the test binary double as the mecha command, so scripts
// run the real CLI as a separate process.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"mecha":   func() { os.Exit(root.Main(os.Args[1:])) },
		"fakellm": func() { os.Exit(fakellm.Main(os.Args[1:])) },
		// A small stdio MCP server with faults (see mcptest.Main).
		"mcpserver": func() { os.Exit(mcptest.Main(os.Args[1:])) },
		// httpd is the attack suite's loopback web server (see httpdMain).
		"httpd": func() { os.Exit(httpdMain(os.Args[1:])) },
		// mcpupstream is a small MCP server on stdio, for the proxy.
		"mcpupstream": func() { os.Exit(mcpproxytest.Main(os.Args[1:])) },
		// sink is the exfiltration server of the sandbox scripts, and
		// netprobe the client they try to reach it with from the shell.
		"sink":     func() { os.Exit(sandboxtest.SinkMain(os.Args[1:])) },
		"netprobe": func() { os.Exit(sandboxtest.Probe(append([]string{sandboxtest.ProbeArg}, os.Args[1:]...))) },
		// mecha-capped is mecha with its data segment capped at 1 GiB, so
		// that a read without bound fails at once ("fatal error: out of
		// memory", exit 2) instead of taking the machine's memory.
		"mecha-capped": func() {
			lim := syscall.Rlimit{Cur: 1 << 30, Max: 1 << 30}
			if err := syscall.Setrlimit(syscall.RLIMIT_DATA, &lim); err != nil {
				fmt.Fprintln(os.Stderr, "mecha-capped:", err)
				os.Exit(125)
			}
			os.Exit(root.Main(os.Args[1:]))
		},
	})
}

func TestScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, scriptParams(filepath.Join("testdata", "script"), nil))
}

// scriptParams are the suite's: its commands, conditions and environment,
// over the scripts of dir; setup, when set, adds to the environment.
func scriptParams(dir string, setup func(*testscript.Env) error) testscript.Params {
	return testscript.Params{
		Dir:                 dir,
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "root": // what the kernel lets read any /proc/PID
				return os.Geteuid() == 0, nil
			case "sandbox": // what the kernel lets mecha confine the shell with
				// A Linux kernel the probe finds unable to confine fails
				// the scripts that ask, unless MECHA_ALLOW_NO_SANDBOX=1 (see
				// sandboxtest.Require): a mis-probe must not pass as skips.
				// Elsewhere there is no sandbox to find.
				sup := sandbox.Probe()
				ok := sup.Landlock >= 1 && sup.Seccomp
				if !ok && runtime.GOOS == "linux" && os.Getenv(sandboxtest.AllowNoSandbox) != "1" {
					return false, fmt.Errorf("this kernel cannot sandbox (Landlock ABI %d, seccomp %v); set %s=1 to run the scripts without", sup.Landlock, sup.Seccomp, sandboxtest.AllowNoSandbox)
				}
				return ok, nil
			}
			for _, tool := range []string{"curl", "python3", "bash"} {
				if cond == "have-"+tool {
					_, err := exec.LookPath(tool)
					return err == nil, nil
				}
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"status":       cmdStatus,
			"waitfile":     cmdWaitFile,
			"envfile":      cmdEnvFile,
			"scan":         cmdScan,
			"newest":       cmdNewest,
			"childof":      cmdChildOf,
			"gone":         cmdGone,
			"expand":       cmdExpand,
			"jsonl":        cmdJSONL,
			"onterm":       cmdOnTerm,
			"bytes":        cmdBytes,
			"fill":         cmdFill,
			"waitbackfill": cmdWaitBackfill,
		},
		Setup: func(e *testscript.Env) error {
			home := filepath.Join(e.WorkDir, "home")
			e.Setenv("HOME", home)
			e.Setenv("MECHA_HOME", filepath.Join(home, ".mecha"))
			e.Setenv("MECHA_SESSION_DIR", filepath.Join(home, ".mecha", "sessions"))
			e.Setenv("TZ", "UTC")
			e.Setenv("NO_COLOR", "1")
			// A title of 70,000 characters, longer than a header may be.
			e.Setenv("TITLE", strings.Repeat("x", 70000))
			repo, err := filepath.Abs(filepath.Join("..", ".."))
			if err != nil {
				return err
			}
			e.Setenv("REPO", repo)
			if setup != nil {
				return setup(e)
			}
			return nil
		},
	}
}

// httpdMain serves on a loopback port until killed, writing its URL to
// -url-file and one line per request ("GET /path?query") to -log. With
// -page it answers every request with that file as HTML: the attack
// suite's hostile page. Without, it answers "ok": the exfiltration
// server, whose log is what the suite inspects. With -host its URL names
// that host (localhost) instead of the address, so two servers can be two
// hosts.
//
//	httpd -url-file F -log F [-page FILE] [-host NAME]
func httpdMain(args []string) int {
	fs := flag.NewFlagSet("httpd", flag.ContinueOnError)
	urlFile := fs.String("url-file", "", "write the server's URL here")
	logFile := fs.String("log", "", "append each request here")
	page := fs.String("page", "", "serve this file as HTML")
	host := fs.String("host", "", "name the server by this host in its URL")
	if err := fs.Parse(args); err != nil || *urlFile == "" || *logFile == "" {
		return 2
	}
	lf, err := os.OpenFile(*logFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var body []byte
	if *page != "" {
		if body, err = os.ReadFile(*page); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var mu sync.Mutex
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		fmt.Fprintf(lf, "%s %s\n", r.Method, r.URL.RequestURI())
		lf.Sync()
		mu.Unlock()
		if body != nil {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write(body)
			return
		}
		fmt.Fprint(w, "ok")
	})
	addr := ln.Addr().String()
	if *host != "" {
		addr = net.JoinHostPort(*host, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	}
	if err := os.WriteFile(*urlFile, []byte("http://"+addr), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	http.Serve(ln, h)
	return 0
}

// cmdExpand writes SRC to DST with $VAR and ${VAR} replaced by the
// script's environment (to put the servers' URLs into a fakellm script):
//
//	expand SRC DST
func cmdExpand(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: expand SRC DST")
	}
	b, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(os.Expand(string(b), ts.Getenv)), 0o600))
}

// cmdFill writes N sessions into DIR from the template FILE, its ${ID}
// each session's id (a second apart from 2026-01-01 00:00:00):
//
//	fill N FILE DIR
func cmdFill(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: fill N FILE DIR")
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 0 {
		ts.Fatalf("fill: bad count %q", args[0])
	}
	tmpl, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	dir := ts.MkAbs(args[2])
	ts.Check(os.MkdirAll(dir, 0o700))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		id := fmt.Sprintf("%s-%08x", base.Add(time.Duration(i)*time.Second).Format("20060102T150405"), i)
		body := strings.ReplaceAll(string(tmpl), "${ID}", id)
		ts.Check(os.WriteFile(filepath.Join(dir, id+".jsonl"), []byte(body), 0o600))
	}
}

// cmdWaitBackfill waits until no background indexing of the store DIR
// runs (cli/backfill), at most a minute:
//
//	waitbackfill DIR
func cmdWaitBackfill(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitbackfill DIR")
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		_, running, err := backfill.Running(ts.MkAbs(args[0]))
		ts.Check(err)
		if !running {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("the background indexing of %s still runs after a minute", args[0])
		}
	}
}

// cmdStatus runs a program and checks its exit code:
//
//	status CODE PROGRAM [ARGS...]
func cmdStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: status CODE PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("status: bad code %q", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("status: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// cmdWaitFile waits up to 20 seconds for a file to exist and be non-empty:
//
//	waitfile FILE
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile FILE")
	}
	path := ts.MkAbs(args[0])
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if st, err := os.Stat(path); err == nil && st.Size() > 0 {
			return
		}
	}
	ts.Fatalf("%s did not appear", args[0])
}

// cmdEnvFile sets an environment variable to a file's content:
//
//	envfile NAME FILE
func cmdEnvFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: envfile NAME FILE")
	}
	b, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	ts.Setenv(args[0], string(bytes.TrimSpace(b)))
}

// cmdScan looks for a string in every file under the given directories;
// with !, it fails when any file holds it:
//
//	[!] scan STRING DIR...
func cmdScan(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: scan STRING DIR...")
	}
	needle := []byte(args[0])
	var found []string
	files := 0
	for _, dir := range args[1:] {
		err := filepath.WalkDir(ts.MkAbs(dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			files++
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if bytes.Contains(b, needle) {
				found = append(found, path)
			}
			return nil
		})
		ts.Check(err)
	}
	if files == 0 {
		ts.Fatalf("scan: no files under %v", args[1:])
	}
	switch {
	case neg && len(found) > 0:
		ts.Fatalf("%q found in %v", args[0], found)
	case !neg && len(found) == 0:
		ts.Fatalf("%q found in none of %d files", args[0], files)
	}
	ts.Logf("scanned %d files", files)
}

// cmdNewest sets an environment variable to the id of the last written session
// in $MECHA_SESSION_DIR:
//
//	newest NAME
func cmdNewest(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: newest NAME")
	}
	names, err := filepath.Glob(filepath.Join(ts.Getenv("MECHA_SESSION_DIR"), "*.jsonl"))
	ts.Check(err)
	if len(names) == 0 {
		ts.Fatalf("no sessions")
	}
	newest, newestMod := "", time.Time{}
	for _, n := range names {
		st, err := os.Stat(n)
		ts.Check(err)
		if newest == "" || st.ModTime().After(newestMod) {
			newest, newestMod = filepath.Base(n), st.ModTime()
		}
	}
	ts.Setenv(args[0], newest[:len(newest)-len(".jsonl")])
}

// cmdChildOf sets NAME to the id of the session whose header names
// PARENT as its parent and, when given, CALL_INDEX (from 1, in the order
// the children were created) picks among several:
//
//	childof NAME PARENT [N]
func cmdChildOf(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: childof NAME PARENT [N]")
	}
	n := 1
	if len(args) == 3 {
		var err error
		n, err = strconv.Atoi(args[2])
		ts.Check(err)
	}
	dir := ts.Getenv("MECHA_SESSION_DIR")
	kids, err := (&session.Store{Dir: dir}).Children(session.Ref{Dir: dir, ID: args[1]}) // oldest first
	ts.Check(err)
	if n < 1 || n > len(kids) {
		ts.Fatalf("%s has %d children, not %d", args[1], len(kids), n)
	}
	ts.Setenv(args[0], kids[n-1].Meta.ID)
}

// cmdGone waits up to 30 seconds for the processes whose pids the files
// hold (one or more each, white-space separated) to be gone (exited, or
// zombies no one reaped yet); if one is still running then, it kills them
// all and fails:
//
//	gone PIDFILE...
func cmdGone(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: gone PIDFILE...")
	}
	var pids []int
	for _, f := range args {
		b, err := os.ReadFile(ts.MkAbs(f))
		ts.Check(err)
		fields := strings.Fields(string(b))
		if len(fields) == 0 {
			ts.Fatalf("no pids in %s", f)
		}
		for _, field := range fields {
			pid, err := strconv.Atoi(field)
			ts.Check(err)
			pids = append(pids, pid)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, pid := range pids {
		for !proctest.Gone(pid) {
			if time.Now().After(deadline) {
				for _, p := range pids { // leave nothing behind
					_ = syscall.Kill(p, syscall.SIGKILL)
				}
				ts.Fatalf("process %d is still running", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	ts.Logf("%d processes gone", len(pids))
}
