package importrules

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
)

// WorldReads are the package-level names through which code reaches the
// process's environment, clock, time zone, network client, streams and GC
// settings. Commands get all of these from their cmdkit.Env, so that tests
// can fix them; a command that reads one itself breaks that.
var WorldReads = map[string][]string{
	"os":            {"Getenv", "LookupEnv", "Environ", "Stdin", "Stdout", "Stderr", "Exit"},
	"time":          {"Now", "Since", "Until", "Local"},
	"net/http":      {"DefaultClient", "Get", "Post", "Head", "PostForm"},
	"runtime/debug": {"SetGCPercent", "SetMemoryLimit"},
}

// CheckWorldReads parses the non-test Go files under dir and returns one
// line per use of a name in WorldReads, with its position.
func CheckWorldReads(dir string) ([]string, error) {
	var found []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		found = append(found, worldReadsIn(fset, f)...)
		return nil
	})
	return found, err
}

func worldReadsIn(fset *token.FileSet, f *ast.File) []string {
	// The local name of each watched import.
	names := map[string]string{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if _, ok := WorldReads[path]; !ok {
			continue
		}
		local := filepath.Base(path)
		if imp.Name != nil {
			local = imp.Name.Name
		}
		names[local] = path
	}
	var found []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		path, ok := names[id.Name]
		if !ok {
			return true
		}
		for _, name := range WorldReads[path] {
			if sel.Sel.Name == name {
				found = append(found, fmt.Sprintf("%s: %s.%s: take it from the command's cmdkit.Env", fset.Position(sel.Pos()), path, name))
			}
		}
		return true
	})
	return found
}
