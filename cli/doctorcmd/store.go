package doctorcmd

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/session"
)

// storeFiles are the warnings about the store's files: .jsonl files that
// are not sessions (unreadable, not regular, a header that does not
// parse) and headers that claim another id than their file's name.
func storeFiles(l *session.Listing) []Check {
	var out []Check
	if n := len(l.NotSessions); n > 0 {
		first := l.NotSessions[0]
		out = append(out, Check{Name: "store", Status: Warning,
			Detail: fmt.Sprintf("%d .jsonl %s passed over, such as %s: %s", n, textfmt.Plural(n, "file", "files"), first.Path, textfmt.OneLine(first.Reason())),
			Fix:    "move them out of the session directory (mecha sessions list names each one on stderr)"})
	}
	var foreign []string
	for _, s := range l.Sessions {
		if s.HeaderID != "" {
			foreign = append(foreign, s.Meta.ID)
		}
	}
	if n := len(foreign); n > 0 {
		out = append(out, Check{Name: "store", Status: Warning,
			Detail: fmt.Sprintf("%d %s a header that claims another id (%s): each is known by its file name", n, textfmt.Plural(n, "session has", "sessions have"), textfmt.Clip(strings.Join(foreign, ", "), 200)),
			Fix:    "nothing is lost; rename a file to the id its header claims if that is the one you mean"})
	}
	return out
}

// diskCheck reports the free space of the store's file system.
func diskCheck(dir string) Check {
	var st unix.Statfs_t
	c := Check{Name: "disk", Status: OK}
	if err := unix.Statfs(dir, &st); err != nil {
		c.Status, c.Detail, c.Fix = Warning, "free space unknown: "+err.Error(), "check the file system of "+dir
		return c
	}
	free := uint64(st.Bavail) * uint64(st.Bsize)
	c.Detail = humanBytes(free) + " free for the store"
	if free < lowDisk {
		c.Status = Warning
		c.Fix = "free some space, or prune old sessions: mecha sessions prune --older-than 90d"
	}
	return c
}

// humanBytes is n in B, KiB, MiB, GiB or TiB with one decimal.
func humanBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit && exp < 3; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGT"[exp])
}
