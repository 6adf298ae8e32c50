package cmdkit

import (
	"bufio"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/mecha-agent/mecha/internal/safeopen"
)

// PinsPath is where the pins of "mecha regress" live: path when given,
// else $MECHA_HOME/regression-sessions.txt.
func (e *Env) PinsPath(path string) (string, error) {
	if path != "" {
		return path, nil
	}
	home, err := e.Home()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, "regression-sessions.txt"), nil
}

// ReadPins reads a pin file: one session id per line, # comments and
// blank lines allowed. Only a regular file is read (a FIFO does not hang
// it); a missing file is an error wrapping os.ErrNotExist.
func ReadPins(path string) ([]string, error) {
	f, err := safeopen.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ids []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		if line = strings.TrimSpace(line); line != "" {
			ids = append(ids, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ids, nil
}
