package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
)

// A mutant is one edit of one file: the bytes [Off, End) replaced by New.
type mutant struct {
	File      string // absolute path
	Off, End  int
	New       string
	Line, Col int
	Kind      string // flip, boundary, logic, negate, nil-error, delete
	Old       string // the source replaced, for the report
}

func (m mutant) String() string {
	return fmt.Sprintf("%s `%s` -> `%s`", m.Kind, oneLine(m.Old), oneLine(m.New))
}

// apply returns src with the mutant's edit.
func (m mutant) apply(src []byte) []byte {
	out := make([]byte, 0, len(src)+len(m.New))
	out = append(out, src[:m.Off]...)
	out = append(out, m.New...)
	return append(out, src[m.End:]...)
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// negations and boundaries of the comparison operators.
var (
	negation = map[token.Token]token.Token{
		token.EQL: token.NEQ, token.NEQ: token.EQL,
		token.LSS: token.GEQ, token.GEQ: token.LSS,
		token.GTR: token.LEQ, token.LEQ: token.GTR,
	}
	boundary = map[token.Token]token.Token{
		token.LSS: token.LEQ, token.LEQ: token.LSS,
		token.GTR: token.GEQ, token.GEQ: token.GTR,
	}
)

// mutantsOf lists the mutants of one Go file, in source order.
func mutantsOf(path string, src []byte) ([]mutant, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	g := &gen{fset: fset, src: src, path: path, skip: map[ast.Node]bool{}}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
			g.fn(fd.Type, fd.Body)
		}
	}
	return g.out, nil
}

type gen struct {
	fset *token.FileSet
	src  []byte
	path string
	skip map[ast.Node]bool // statements not to delete (a for loop's init and post)
	out  []mutant
}

func (g *gen) add(kind string, from, to token.Pos, repl string) {
	off, end := g.fset.Position(from).Offset, g.fset.Position(to).Offset
	p := g.fset.Position(from)
	g.out = append(g.out, mutant{File: g.path, Off: off, End: end, New: repl, Line: p.Line, Col: p.Column,
		Kind: kind, Old: string(g.src[off:end])})
}

func (g *gen) text(n ast.Node) string {
	return string(g.src[g.fset.Position(n.Pos()).Offset:g.fset.Position(n.End()).Offset])
}

// fn lists the mutants of one function body whose type is ft.
func (g *gen) fn(ft *ast.FuncType, body *ast.BlockStmt) {
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			g.fn(n.Type, n.Body)
			return false
		case *ast.BinaryExpr:
			g.binary(n)
		case *ast.IfStmt:
			g.negate(n.Cond)
		case *ast.ForStmt:
			g.negate(n.Cond)
			g.skip[n.Init], g.skip[n.Post] = true, true
		case *ast.ReturnStmt:
			g.nilError(ft, n)
		case *ast.ExprStmt:
			if _, ok := n.X.(*ast.CallExpr); ok && !g.skip[n] {
				g.add("delete", n.Pos(), n.End(), "")
			}
		case *ast.DeferStmt:
			g.add("delete", n.Pos(), n.End(), "")
		case *ast.AssignStmt:
			if n.Tok != token.DEFINE && !g.skip[n] && !allBlank(n.Lhs) {
				g.add("delete", n.Pos(), n.End(), "")
			}
		case *ast.IncDecStmt:
			if !g.skip[n] {
				g.add("delete", n.Pos(), n.End(), "")
			}
		}
		return true
	})
}

// negate negates a condition, unless it is a comparison, whose flip is
// the same mutant.
func (g *gen) negate(cond ast.Expr) {
	if cond == nil {
		return
	}
	if b, ok := ast.Unparen(cond).(*ast.BinaryExpr); ok {
		if _, cmp := negation[b.Op]; cmp {
			return
		}
	}
	g.add("negate", cond.Pos(), cond.End(), "!("+g.text(cond)+")")
}

func (g *gen) binary(b *ast.BinaryExpr) {
	end := b.OpPos + token.Pos(len(b.Op.String()))
	if to, ok := negation[b.Op]; ok {
		g.add("flip", b.OpPos, end, to.String())
	}
	if to, ok := boundary[b.Op]; ok {
		g.add("boundary", b.OpPos, end, to.String())
	}
	switch b.Op {
	case token.LAND:
		g.add("logic", b.OpPos, end, "||")
	case token.LOR:
		g.add("logic", b.OpPos, end, "&&")
	}
}

// nilError turns the error a return statement returns into nil, when the
// function's last result is an error and the statement returns one
// expression per result, the last not already nil.
func (g *gen) nilError(ft *ast.FuncType, r *ast.ReturnStmt) {
	if ft.Results == nil || len(ft.Results.List) == 0 || len(r.Results) == 0 {
		return
	}
	fields := ft.Results.List
	if id, ok := fields[len(fields)-1].Type.(*ast.Ident); !ok || id.Name != "error" {
		return
	}
	n := 0
	for _, f := range fields {
		n += max(1, len(f.Names))
	}
	last := r.Results[len(r.Results)-1]
	if len(r.Results) != n {
		return
	}
	if id, ok := last.(*ast.Ident); ok && id.Name == "nil" {
		return
	}
	g.add("nil-error", last.Pos(), last.End(), "nil")
}

func allBlank(es []ast.Expr) bool {
	for _, e := range es {
		if id, ok := e.(*ast.Ident); !ok || id.Name != "_" {
			return false
		}
	}
	return true
}

// packageMutants lists the mutants of the files of a package.
func packageMutants(files []string) ([]mutant, error) {
	var all []mutant
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		ms, err := mutantsOf(path, src)
		if err != nil {
			return nil, err
		}
		all = append(all, ms...)
	}
	return all, nil
}
