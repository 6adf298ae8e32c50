package builtin

import (
	"strings"
	"testing"
)

func TestFSGlob(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		input   string
		max     int // MaxResultBytes
		want    string
		wantErr bool
	}{
		{name: "any depth", input: `{"pattern":"**/*.go"}`, want: "a.go\n"},
		{name: "top level only", input: `{"pattern":"*.txt"}`, want: "crlf.txt\nlink.txt\n"},
		{name: "nested ignore file", input: `{"pattern":"**/*.txt"}`, want: "b/c.txt\ncrlf.txt\nlink.txt\nsub/other.txt\n"},
		{name: "negated pattern", input: `{"pattern":"*.log"}`, want: "keep.log\n"},
		{name: "under a directory", input: `{"pattern":"b/**"}`, want: "b/c.txt\nb/d/\nb/d/e.md\n"},
		{name: "directories", input: `{"pattern":"*/"}`, want: "b/\nsub/\n"},
		{name: "from path", input: `{"pattern":"*","path":"b"}`, want: "b/c.txt\nb/d/\n"},
		{name: "from path, any depth", input: `{"pattern":"**/*.md","path":"ROOT/b"}`, want: "b/d/e.md\n"},
		{name: "dot slash", input: `{"pattern":"./b/*.txt"}`, want: "b/c.txt\n"},
		{name: "braces", input: `{"pattern":"{a.go,keep.log,b/d/*}"}`, want: "a.go\nb/d/e.md\nkeep.log\n"},
		{name: "ignored start named", input: `{"pattern":"ignored/**"}`, want: "ignored/x.go\n"},
		{name: "ignored path named", input: `{"pattern":"*","path":"ignored"}`, want: "ignored/x.go\n"},
		{name: "the dot files", input: `{"pattern":".*"}`, want: ".gitignore\n"},
		{name: "no match", input: `{"pattern":"*.zzz"}`, want: "[no matches]"},
		{name: "missing start", input: `{"pattern":"nope/**/*.go"}`, want: "[no matches]"},
		{name: "max results", input: `{"pattern":"**","max_results":3}`,
			want: ".gitignore\na.go\nb/\n[showing the first 3 of 13 matching paths: stopped at max_results=3; narrow the pattern or path]"},
		{name: "byte limit", input: `{"pattern":"**"}`, max: 20,
			want: ".gitignore\na.go\nb/\n[showing the first 3 of 13 matching paths: stopped at the 20-byte output limit; narrow the pattern or path]"},

		{name: "missing pattern", input: `{}`, want: `invalid input: missing required field "pattern"`, wantErr: true},
		{name: "bad pattern", input: `{"pattern":"[a"}`, want: `invalid input: pattern "[a" is not a valid glob`, wantErr: true},
		{name: "absolute pattern", input: `{"pattern":"/etc/*"}`, want: `invalid input: pattern "/etc/*" must be relative to path, without ".." (set path to search elsewhere)`, wantErr: true},
		{name: "climbing pattern", input: `{"pattern":"b/../../*"}`, want: `invalid input: pattern "b/../../*" must be relative to path, without ".." (set path to search elsewhere)`, wantErr: true},
		{name: "a file", input: `{"pattern":"*","path":"a.go"}`, want: "a.go is not a directory; fs_glob searches a directory", wantErr: true},
		{name: "outside", input: `{"pattern":"*","path":".."}`, want: `path ".." is outside the workspace`, wantErr: true},
		{name: "max results zero", input: `{"pattern":"*","max_results":0}`, want: "invalid input: max_results must be between 1 and 5000, got 0", wantErr: true},
		{name: "unknown field", input: `{"pattern":"*","glob":"*"}`, want: `invalid input: unknown field "glob" (accepted fields: pattern, path, max_results)`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws, root := searchWorkspace(t)
			res := run(t, NewFSGlob(ws, Options{MaxResultBytes: tt.max}), strings.ReplaceAll(tt.input, "ROOT", root))
			if res.IsError != tt.wantErr || res.Content != tt.want {
				t.Errorf("result = %+v\nwant IsError=%v %q", res, tt.wantErr, tt.want)
			}
		})
	}
}
