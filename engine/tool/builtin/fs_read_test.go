package builtin

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFSRead(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 200<<10) // longer than the read buffer
	tests := []struct {
		name    string
		content string // of f.txt
		input   string
		max     int
		want    string
		wantErr bool
	}{
		{name: "whole file", content: "a\nb\nc\n", input: `{"path":"f.txt"}`, want: "a\nb\nc\n"},
		{name: "no final newline", content: "a\nb", input: `{"path":"f.txt"}`, want: "a\nb"},
		{name: "crlf kept", content: "a\r\nb\r\n", input: `{"path":"f.txt"}`, want: "a\r\nb\r\n"},
		{name: "empty", content: "", input: `{"path":"f.txt"}`, want: "[empty file]"},
		{name: "offset", content: "a\nb\nc\n", input: `{"path":"f.txt","offset":2}`, want: "b\nc\n[showing lines 2-3 of 3]"},
		{name: "offset and limit", content: "a\nb\nc\n", input: `{"path":"f.txt","offset":2,"limit":1}`, want: "b\n[showing lines 2-2 of 3; continue with offset=3]"},
		{name: "limit", content: "a\nb\nc\n", input: `{"path":"f.txt","limit":1}`, want: "a\n[showing lines 1-1 of 3; continue with offset=2]"},
		{name: "limit past the end", content: "a\nb\nc\n", input: `{"path":"f.txt","limit":10}`, want: "a\nb\nc\n"},
		{name: "last line without newline", content: "a\nb", input: `{"path":"f.txt","offset":2}`, want: "b\n[showing lines 2-2 of 2]"},
		{name: "offset is the last line", content: "a\nb\nc", input: `{"path":"f.txt","offset":3}`, want: "c\n[showing lines 3-3 of 3]"},
		{name: "offset past the end", content: "a\nb\nc\n", input: `{"path":"f.txt","offset":4}`, want: "offset 4 is past the end of f.txt, which has 3 lines", wantErr: true},
		{name: "offset in empty file", content: "", input: `{"path":"f.txt","offset":2}`, want: "offset 2 is past the end of f.txt, which is empty", wantErr: true},
		{name: "offset zero", content: "a\n", input: `{"path":"f.txt","offset":0}`, want: "invalid input: offset must be at least 1 (lines are numbered from 1), got 0", wantErr: true},
		{name: "limit zero", content: "a\n", input: `{"path":"f.txt","limit":0}`, want: "invalid input: limit must be at least 1, got 0", wantErr: true},
		{
			name: "byte limit stops at a line", content: "aaaa\nbbbb\ncccc\n", input: `{"path":"f.txt"}`, max: 12,
			want: "aaaa\nbbbb\n[showing lines 1-2 of 3, stopped at the 12-byte output limit; continue with offset=3]",
		},
		{
			name: "byte limit exactly fits", content: "aaaa\nbbbb\n", input: `{"path":"f.txt"}`, max: 10,
			want: "aaaa\nbbbb\n",
		},
		{
			name: "first line too long", content: "0123456789abcdef\nx\n", input: `{"path":"f.txt"}`, max: 10,
			want: "0123456789\n[line 1 is 17 bytes long, more than the 10-byte output limit: showing its first 10 bytes; continue with offset=2]",
		},
		{
			name: "long line cut on a rune boundary", content: "ééé", input: `{"path":"f.txt"}`, max: 5,
			want: "éé\n[line 1 is 6 bytes long, more than the 5-byte output limit: showing its first 4 bytes]",
		},
		{
			name: "line longer than the read buffer", content: "a\n" + long + "\nb\n", input: `{"path":"f.txt","offset":2}`,
			want: long[:64<<10] + "\n" + fmt.Sprintf("[line 2 is %d bytes long, more than the 65536-byte output limit: showing its first 65536 bytes; continue with offset=3]", len(long)+1),
		},
		{name: "invalid UTF-8 replaced", content: "a\xffb\n", input: `{"path":"f.txt"}`, want: "a\uFFFDb\n"},
		{name: "binary", content: "ELF\x00\x01", input: `{"path":"f.txt"}`, want: "f.txt is a binary file (it contains NUL bytes); fs_read reads text files only", wantErr: true},
		{name: "binary past the selection", content: "a\nb\n\x00", input: `{"path":"f.txt","limit":1}`, want: "f.txt is a binary file (it contains NUL bytes); fs_read reads text files only", wantErr: true},
		{name: "directory", input: `{"path":"dir"}`, want: "dir is a directory; use fs_list to list it", wantErr: true},
		{name: "missing file", input: `{"path":"nope.txt"}`, want: "nope.txt: no such file or directory", wantErr: true},
		{name: "missing path", input: `{}`, want: `invalid input: missing required field "path"`, wantErr: true},
		{name: "unknown field", input: `{"path":"f.txt","lines":3}`, want: `invalid input: unknown field "lines" (accepted fields: path, offset, limit)`, wantErr: true},
		{name: "wrong type", input: `{"path":"f.txt","offset":"2"}`, want: `invalid input: field "offset" must be an integer, got string`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws, root := testWorkspace(t)
			writeFiles(t, root, map[string]string{"f.txt": tt.content, "dir/x": ""})
			res := run(t, NewFSRead(ws, Options{MaxResultBytes: tt.max}), tt.input)
			if res.IsError != tt.wantErr || res.Content != tt.want {
				t.Errorf("result = %+v\nwant IsError=%v %q", trimResult(res.Content), tt.wantErr, trimResult(tt.want))
			}
		})
	}
}

func trimResult(s string) string {
	if len(s) > 300 {
		return s[:100] + "..." + s[len(s)-200:]
	}
	return s
}

func TestFSReadLineCount(t *testing.T) {
	t.Parallel()
	ws, root := testWorkspace(t)
	var b strings.Builder
	for i := 1; i <= 100000; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	if err := os.WriteFile(filepath.Join(root, "big.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	res := run(t, NewFSRead(ws, Options{}), `{"path":"big.txt","offset":99999,"limit":5}`)
	if want := "line 99999\nline 100000\n[showing lines 99999-100000 of 100000]"; res.Content != want {
		t.Errorf("got %q, want %q", res.Content, want)
	}
	// Lines 1-6664 take 9*7 + 90*8 + 900*9 + 5665*10 = 65533 bytes.
	res = run(t, NewFSRead(ws, Options{}), `{"path":"big.txt"}`)
	if !strings.HasSuffix(res.Content, "stopped at the 65536-byte output limit; continue with offset=6665]") ||
		!strings.HasSuffix(strings.Split(res.Content, "\n[")[0], "line 6664") {
		t.Errorf("got ...%q", res.Content[len(res.Content)-200:])
	}
}
