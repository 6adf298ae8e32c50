package session

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mecha-agent/mecha/record/transcript"
)

// The test binary doubles as the child processes of the multi-process
// tests: MECHA_SESSION_TEST_CHILD selects what the child does.
func TestMain(m *testing.M) {
	switch os.Getenv("MECHA_SESSION_TEST_CHILD") {
	case "":
		code := m.Run()
		removeStatsStores()
		os.Exit(code)
	case "append":
		os.Exit(childAppend())
	case "append-forever":
		os.Exit(childAppendForever())
	case "append-past-limit":
		os.Exit(childAppendPastLimit())
	case "write-store":
		os.Exit(childWriteStore())
	default:
		fmt.Fprintln(os.Stderr, "unknown child mode")
		os.Exit(3)
	}
}

// numbered returns a user message whose text is "<writer>:<n>:" padded to
// about size bytes, so a reader can check each record arrived whole.
func numbered(writer string, n, size int) *transcript.Message {
	head := fmt.Sprintf("%s:%d:", writer, n)
	return &transcript.Message{Role: transcript.RoleUser, Content: []transcript.Block{
		transcript.TextBlock(head + strings.Repeat("x", max(0, size-len(head)))),
	}}
}

func parseNumbered(m *transcript.Message) (writer string, n int, ok bool) {
	if len(m.Content) != 1 {
		return "", 0, false
	}
	parts := strings.SplitN(m.Content[0].Text, ":", 3)
	if len(parts) != 3 {
		return "", 0, false
	}
	n, err := strconv.Atoi(parts[1])
	return parts[0], n, err == nil
}

func childAppend() int {
	path, name := os.Getenv("MECHA_PATH"), os.Getenv("MECHA_WRITER")
	count, _ := strconv.Atoi(os.Getenv("MECHA_COUNT"))
	w, err := OpenWriter(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for i := range count {
		// Sizes vary so records straddle page and buffer boundaries.
		if err := w.Append(numbered(name, i, 100+(i*7919)%9000)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if err := w.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func childAppendForever() int {
	w, err := OpenWriter(os.Getenv("MECHA_PATH"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("ready")
	for i := 0; ; i++ {
		// Large records make it likely the kill lands inside a write.
		if err := w.Append(numbered("k", i, 1<<20+i%4096)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
}

// childAppendPastLimit appends under a file size limit so that a write
// fails part-way, as on a full disk, and reports what Append said.
func childAppendPastLimit() int {
	signal.Ignore(syscall.SIGXFSZ)
	path := os.Getenv("MECHA_PATH")
	w, err := OpenWriter(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	st, _ := os.Stat(path)
	lim := uint64(st.Size() + 4096)
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: lim, Max: lim}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := w.Append(numbered("small", 0, 100)); err != nil {
		fmt.Fprintln(os.Stderr, "first:", err)
		return 1
	}
	err1 := w.Append(numbered("big", 1, 64<<10))
	err2 := w.Append(numbered("small", 2, 10))
	out, _ := json.Marshal(map[string]string{"first": errString(err1), "second": errString(err2)})
	fmt.Println(string(out))
	return 0
}

// childWriteStore writes a benchmark store for scripts/stats-vs-grep.sh:
// MECHA_STORE_N sessions of about MECHA_STORE_SIZE bytes whose tool results
// are about MECHA_STORE_LINE bytes, into MECHA_STORE_DIR.
func childWriteStore() int {
	var nums [3]int
	for i, name := range []string{"MECHA_STORE_N", "MECHA_STORE_SIZE", "MECHA_STORE_LINE"} {
		n, err := strconv.Atoi(os.Getenv(name))
		if err != nil || n <= 0 {
			fmt.Fprintf(os.Stderr, "%s: want a positive number\n", name)
			return 2
		}
		nums[i] = n
	}
	total := os.Getenv("MECHA_STORE_TOTAL") == "1" // summaries with session_turns
	if err := writeStoreOf(os.Getenv("MECHA_STORE_DIR"), nums[0], nums[1], nums[2], total); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
