package cli_test

import (
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mecha-agent/mecha/internal/cli"
)

var update = flag.Bool("update", false, "rewrite the golden files of the scripts in testdata/script")

// TestMain makes the test binary double as the mecha command, so scripts
// run the real CLI as a separate process.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"mecha": func() { os.Exit(cli.Main(os.Args[1:])) },
	})
}

func TestScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"status": cmdStatus,
		},
		Setup: func(e *testscript.Env) error {
			home := filepath.Join(e.WorkDir, "home")
			e.Setenv("HOME", home)
			e.Setenv("MECHA_HOME", filepath.Join(home, ".mecha"))
			e.Setenv("MECHA_SESSION_DIR", filepath.Join(home, ".mecha", "sessions"))
			e.Setenv("TZ", "UTC")
			e.Setenv("NO_COLOR", "1")
			return nil
		},
	})
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
