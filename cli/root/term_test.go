package root_test

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/creack/pty"
	"github.com/rogpeppe/go-internal/testscript"
)

// termEnv are the variables of the script handed to a program run on a
// terminal (testscript does not hand out its whole environment).
var termEnv = []string{"PATH", "HOME", "MECHA_HOME", "MECHA_SESSION_DIR", "TZ", "TERM", "PAGER", "LESS", "NO_COLOR", "WORK", "TMPDIR", "FAKELLM_URL"}

// cmdOnTerm runs a program with its standard output (and input) on a new
// pseudo-terminal, as a person's shell runs it, and makes what the
// terminal received the script's stdout (its CR LF line ends read as LF)
// and the program's standard error its stderr:
//
//	onterm PROGRAM [ARGS...]
//
// The program gets the script's variables named in termEnv and its
// directory. The exit status must be 0 (! onterm: not 0).
func cmdOnTerm(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 {
		ts.Fatalf("usage: onterm PROGRAM [ARGS...]")
	}
	path := lookScriptPath(ts, args[0])
	ctrl, tty, err := pty.Open()
	ts.Check(err)
	defer ctrl.Close()
	ts.Check(pty.Setsize(tty, &pty.Winsize{Rows: 24, Cols: 200}))
	cmd := exec.Command(path, args[1:]...)
	cmd.Dir = ts.MkAbs(".")
	for _, k := range termEnv {
		if v := ts.Getenv(k); v != "" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	ts.Check(cmd.Start())
	tty.Close()
	var out bytes.Buffer
	done := make(chan struct{})
	go func() {
		// Reading the controlling side ends with EIO once every copy of
		// the terminal is closed: the program and whatever it started.
		io.Copy(&out, ctrl)
		close(done)
	}()
	werr := cmd.Wait()
	<-done
	ts.Stdout().Write(bytes.ReplaceAll(out.Bytes(), []byte("\r\n"), []byte("\n")))
	ts.Stderr().Write(stderr.Bytes())
	var ee *exec.ExitError
	switch {
	case werr != nil && !errors.As(werr, &ee):
		ts.Fatalf("onterm: %v", werr)
	case neg && werr == nil:
		ts.Fatalf("onterm: %s succeeded unexpectedly", args[0])
	case !neg && werr != nil:
		ts.Fatalf("onterm: %s: %v", args[0], werr)
	}
}

func lookScriptPath(ts *testscript.TestScript, name string) string {
	if strings.Contains(name, "/") {
		return ts.MkAbs(name)
	}
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		if p, err := exec.LookPath(filepath.Join(dir, name)); err == nil {
			return p
		}
	}
	ts.Fatalf("onterm: %s not found in $PATH", name)
	return ""
}

// cmdBytes counts the occurrences of bytes in the script's last stdout
// (or stderr, or a file) and checks the count:
//
//	bytes [-in stdout|stderr|FILE] COUNT HEX...
//
// COUNT is a number or "+" (at least one); HEX are the bytes (1b for ESC),
// each counted alone. It is how scripts check that no raw control byte
// reached the output, which regular expressions on stdout cannot say
// plainly.
func cmdBytes(ts *testscript.TestScript, neg bool, args []string) {
	in := "stdout"
	if len(args) > 1 && args[0] == "-in" {
		in, args = args[1], args[2:]
	}
	if neg || len(args) < 2 {
		ts.Fatalf("usage: bytes [-in stdout|stderr|FILE] COUNT HEX...")
	}
	data := []byte(ts.ReadFile(in))
	n := 0
	for _, h := range args[1:] {
		b, err := strconv.ParseUint(h, 16, 8)
		if err != nil {
			ts.Fatalf("bytes: bad byte %q", h)
		}
		n += bytes.Count(data, []byte{byte(b)})
	}
	switch {
	case args[0] == "+" && n == 0:
		ts.Fatalf("bytes: none of %v in %s", args[1:], in)
	case args[0] != "+" && strconv.Itoa(n) != args[0]:
		ts.Fatalf("bytes: %d of %v in %s, want %s", n, args[1:], in, args[0])
	}
}
