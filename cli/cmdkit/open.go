package cmdkit

import (
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"runtime"
	"strings"
)

// Opener returns the command that opens a file for a person: $BROWSER
// when set (its first entry of a colon-separated list, split into words;
// "%s" stands for the file, otherwise the file is appended), else the
// platform's opener: open on macOS, xdg-open elsewhere.
func (e *Env) Opener(path string) []string {
	if b := strings.TrimSpace(strings.Split(e.Vars.Get("BROWSER"), ":")[0]); b != "" {
		words := strings.Fields(b)
		with := false
		for i, w := range words {
			if strings.Contains(w, "%s") {
				words[i], with = strings.ReplaceAll(w, "%s", path), true
			}
		}
		if !with {
			words = append(words, path)
		}
		return words
	}
	goos := e.GOOS
	if goos == "" {
		goos = runtime.GOOS
	}
	if goos == "darwin" {
		return []string{"open", path}
	}
	return []string{"xdg-open", path}
}

// OpenFile opens path with Opener's command, in the Env's environment, and
// waits for it: the opener hands the file to a viewer and returns.
func (e *Env) OpenFile(path string) error {
	argv := e.Opener(path)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = e.Environ.List()
	cmd.Stdout, cmd.Stderr = e.Err, e.Err
	if err := cmd.Run(); err != nil {
		var ee *exec.Error
		if errors.As(err, &ee) || errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("cannot open %s: %s not found (set $BROWSER to the command that opens it)", path, argv[0])
		}
		return fmt.Errorf("cannot open %s: %s: %v", path, argv[0], err)
	}
	return nil
}
