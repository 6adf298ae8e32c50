//go:build !linux

package sessionindex

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/mecha-agent/mecha/record/session"
)

// dirNames returns the names of the .jsonl entries of the directory dirfd
// is open on (elsewhere than on Linux, through x/sys/unix's portable
// reader; each name its own string).
func dirNames(dirfd int) ([]string, error) {
	var names []string
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.ReadDirent(dirfd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("session: reading the store: %w", err)
		}
		if n <= 0 {
			return names, nil
		}
		var batch []string
		_, _, batch = unix.ParseDirent(buf[:n], -1, batch)
		for _, name := range batch {
			if len(name) > len(session.Ext) && strings.HasSuffix(name, session.Ext) {
				names = append(names, name)
			}
		}
	}
}
