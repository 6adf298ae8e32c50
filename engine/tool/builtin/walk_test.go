package builtin

import (
	"strings"
	"testing"
)

// TestWalkIgnores: the search tools skip what git would ignore, by the
// rules of .gitignore files at every level and of .git/info/exclude.
func TestWalkIgnores(t *testing.T) {
	t.Parallel()
	files := []string{"a.go", "a.tmp", "keep.tmp", "build/x", "sub/build/y", "sub/b.md", "sub/c.tmp", "gen/z.go", "sub/gen/w.go", "sub/gen/v.txt", "top.md", "notes/build"}
	tests := []struct {
		name   string
		ignore map[string]string // ignore files, by path
		path   string
		want   string
	}{
		{"none", nil, ".", "a.go a.tmp build/ build/x gen/ gen/z.go keep.tmp notes/ notes/build sub/ sub/b.md sub/build/ sub/build/y sub/c.tmp sub/gen/ sub/gen/v.txt sub/gen/w.go top.md"},
		{"anchored", map[string]string{".gitignore": "/build\n"}, ".", "a.go a.tmp gen/ gen/z.go keep.tmp notes/ notes/build sub/ sub/b.md sub/build/ sub/build/y sub/c.tmp sub/gen/ sub/gen/v.txt sub/gen/w.go top.md"},
		{"directories only", map[string]string{".gitignore": "build/\n"}, ".", "a.go a.tmp gen/ gen/z.go keep.tmp notes/ notes/build sub/ sub/b.md sub/c.tmp sub/gen/ sub/gen/v.txt sub/gen/w.go top.md"},
		{"negation", map[string]string{".gitignore": "*.tmp\n!keep.tmp\n"}, ".", "a.go build/ build/x gen/ gen/z.go keep.tmp notes/ notes/build sub/ sub/b.md sub/build/ sub/build/y sub/gen/ sub/gen/v.txt sub/gen/w.go top.md"},
		{"double star", map[string]string{".gitignore": "**/gen/*.go\n"}, ".", "a.go a.tmp build/ build/x gen/ keep.tmp notes/ notes/build sub/ sub/b.md sub/build/ sub/build/y sub/c.tmp sub/gen/ sub/gen/v.txt top.md"},
		{"nested file applies below it", map[string]string{"sub/.gitignore": "*.md\n"}, ".", "a.go a.tmp build/ build/x gen/ gen/z.go keep.tmp notes/ notes/build sub/ sub/build/ sub/build/y sub/c.tmp sub/gen/ sub/gen/v.txt sub/gen/w.go top.md"},
		{"nested file overrides", map[string]string{".gitignore": "*.tmp\n", "sub/.gitignore": "!c.tmp\n"}, ".", "a.go build/ build/x gen/ gen/z.go notes/ notes/build sub/ sub/b.md sub/build/ sub/build/y sub/c.tmp sub/gen/ sub/gen/v.txt sub/gen/w.go top.md"},
		{"info exclude", map[string]string{".git/info/exclude": "*.md\n"}, ".", "a.go a.tmp build/ build/x gen/ gen/z.go keep.tmp notes/ notes/build sub/ sub/build/ sub/build/y sub/c.tmp sub/gen/ sub/gen/v.txt sub/gen/w.go"},
		{"rules above the start", map[string]string{".gitignore": "*.tmp\nsub/gen/\n"}, "sub", "sub/b.md sub/build/ sub/build/y"},
		{"an ignored start", map[string]string{".gitignore": "build/\n*.tmp\n", "sub/build/.gitignore": "y\n"}, "sub/build", ""},
		{"an ignored start keeps its own rules only", map[string]string{".gitignore": "sub/\n*.tmp\n"}, "sub", "sub/b.md sub/build/ sub/build/y sub/c.tmp sub/gen/ sub/gen/v.txt sub/gen/w.go"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws, root := testWorkspace(t)
			tree := map[string]string{}
			for _, f := range files {
				tree[f] = ""
			}
			for p, c := range tt.ignore {
				tree[p] = c
			}
			writeFiles(t, root, tree)
			res := run(t, NewFSGlob(ws, Options{}), mustJSON(t, map[string]string{"pattern": "**", "path": tt.path}))
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(res.Content), "\n") {
				if !strings.HasSuffix(l, ".gitignore") && l != "[no matches]" {
					got = append(got, l)
				}
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("fs_glob ** in %s:\n got %s\nwant %s", tt.path, strings.Join(got, " "), tt.want)
			}
		})
	}
}
