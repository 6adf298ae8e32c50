package builtin

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// dirNames lists the names in dir, as bytes.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// throughJSON is a listing line as the model gets it and sends it back:
// a JSON string each way.
func throughJSON(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back string
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return back
}

// TestNonUTF8Names: a file whose name is not UTF-8 is listed, and read,
// written and edited by the listed name as the same file; no second file
// appears. A file literally named like the escape stays its own file.
func TestNonUTF8Names(t *testing.T) {
	t.Parallel()
	ws, dir := testWorkspace(t)
	raw := "caf\xe9 \xff.txt"     // Latin-1 bytes, as an old archive leaves them
	literal := `caf\xe9 \xff.txt` // the escape's own characters
	writeFiles(t, dir, map[string]string{raw: "one\n", literal: "literal\n", "sub\x80/in.txt": "deep\n"})

	list := run(t, toolNamed(t, ws, NameFSList), `{"depth": 2}`)
	lines := strings.Split(strings.TrimSpace(throughJSON(t, list.Content)), "\n")
	want := []string{`caf\\xe9 \\xff.txt`, `caf\xe9 \xff.txt`, `sub\x80/`, `sub\x80/in.txt`}
	if !slices.Equal(lines, want) {
		t.Fatalf("listing %q, want %q", lines, want)
	}
	listed, literalListed := lines[1], lines[0]

	// The search tools name files as fs_list does.
	grep := run(t, toolNamed(t, ws, NameFSGrep), `{"pattern":"."}`)
	wantGrep := literalListed + ":1:literal\n" + listed + ":1:one\n" + lines[3] + ":1:deep\n[3 matching lines in 3 files]"
	if got := throughJSON(t, grep.Content); got != wantGrep {
		t.Errorf("fs_grep = %q, want %q", got, wantGrep)
	}
	glob := run(t, toolNamed(t, ws, NameFSGlob), `{"pattern":"**"}`)
	if got := throughJSON(t, glob.Content); got != strings.Join(want, "\n")+"\n" {
		t.Errorf("fs_glob = %q, want the listing %q", got, want)
	}

	read := run(t, toolNamed(t, ws, NameFSRead), mustJSON(t, map[string]string{"path": listed}))
	if read.IsError || !strings.Contains(read.Content, "one") {
		t.Errorf("fs_read of the listed name: %+v", read)
	}
	read = run(t, toolNamed(t, ws, NameFSRead), mustJSON(t, map[string]string{"path": literalListed}))
	if read.IsError || !strings.Contains(read.Content, "literal") {
		t.Errorf("fs_read of the literal name: %+v", read)
	}
	read = run(t, toolNamed(t, ws, NameFSRead), mustJSON(t, map[string]string{"path": lines[3]}))
	if read.IsError || !strings.Contains(read.Content, "deep") {
		t.Errorf("fs_read in a directory not UTF-8: %+v", read)
	}
	w := run(t, toolNamed(t, ws, NameFSWrite), mustJSON(t, map[string]string{"path": listed, "content": "two\n"}))
	if w.IsError || !strings.Contains(w.Content, listed) {
		t.Errorf("fs_write: %+v", w)
	}
	e := run(t, toolNamed(t, ws, NameFSEdit), mustJSON(t, map[string]string{"path": listed, "old_string": "two", "new_string": "three"}))
	if e.IsError {
		t.Errorf("fs_edit: %+v", e)
	}
	if got := readFile(t, filepath.Join(dir, raw)); got != "three\n" {
		t.Errorf("the file holds %q, want the write and the edit", got)
	}
	if got := readFile(t, filepath.Join(dir, literal)); got != "literal\n" {
		t.Errorf("the literal file holds %q", got)
	}
	if names := dirNames(t, dir); len(names) != 3 {
		t.Errorf("the workspace holds %q: a second file was created", names)
	}
}

// TestNonUTF8NamesControl: without the encoding, the name the model gets
// back from JSON is another name, and a write to it creates a second file:
// what TestNonUTF8Names guards against.
func TestNonUTF8NamesControl(t *testing.T) {
	t.Parallel()
	_, dir := testWorkspace(t)
	raw := "caf\xe9.txt"
	writeFiles(t, dir, map[string]string{raw: "one\n"})
	back := throughJSON(t, raw)
	if back == raw {
		t.Fatal("JSON kept the bytes: the guard would not be needed")
	}
	if err := os.WriteFile(filepath.Join(dir, back), []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if names := dirNames(t, dir); len(names) != 2 {
		t.Errorf("names %q: the raw name written back did not make a second file", names)
	}
}
