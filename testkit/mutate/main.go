package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

type options struct {
	seed    uint64
	n, p    int
	cover   bool
	match   *regexp.Regexp
	timeout time.Duration
	dry     bool
	goCmd   string
	tmp     string
}

// Outcomes of a mutant.
const (
	killed    = "killed"
	survived  = "survived"
	notViable = "not-viable"
)

type result struct {
	m       mutant
	outcome string
	by      string // the first failing test, "timeout", or "" when it survived
}

type pkgReport struct {
	pkg                                   string
	candidates, uncovered                 int
	killed, survived, notViable, timedOut int
	survivors                             []result
	elapsed                               time.Duration
}

func (r pkgReport) score() float64 {
	if r.killed+r.survived == 0 {
		return 0
	}
	return float64(r.killed) / float64(r.killed+r.survived)
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mutate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seed := fs.Uint64("seed", 1, "the seed of the sample")
	n := fs.Int("n", 25, "mutants per package (0: all)")
	p := fs.Int("p", 1, "go test -p: packages built and tested at once")
	cover := fs.Bool("cover", true, "sample only mutants on code the package's tests cover")
	match := fs.String("match", "", "only mutants whose file:line (relative) matches this regexp")
	timeout := fs.Duration("timeout", 0, "go test -timeout of each mutant (0: 3 × the unmutated run + 1m)")
	dry := fs.Bool("dry", false, "list the sample without running it")
	list := fs.String("listed", "", "run the hand-written mutants of this file instead (see listed.go); exit 1 unless all are killed")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 && *list == "" {
		fmt.Fprintln(stderr, "usage: mutate [flags] PKG... | mutate -listed FILE")
		return 2
	}
	o := options{seed: *seed, n: *n, p: *p, cover: *cover, timeout: *timeout, dry: *dry, goCmd: "go"}
	if *match != "" {
		re, err := regexp.Compile(*match)
		if err != nil {
			fmt.Fprintln(stderr, "mutate: -match:", err)
			return 2
		}
		o.match = re
	}
	tmp, err := os.MkdirTemp("", "mutate-")
	if err != nil {
		fmt.Fprintln(stderr, "mutate:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	o.tmp = tmp
	ctx := context.Background()
	if *list != "" {
		all, err := runListed(ctx, o, *list, stdout)
		if err != nil {
			fmt.Fprintln(stderr, "mutate:", err)
			return 1
		}
		if !all {
			return 1
		}
		return 0
	}
	var reports []pkgReport
	for _, pkg := range fs.Args() {
		r, err := mutatePackage(ctx, o, pkg, stdout)
		if err != nil {
			fmt.Fprintf(stderr, "mutate: %s: %v\n", pkg, err)
			return 1
		}
		reports = append(reports, r)
	}
	if !o.dry {
		summary(stdout, o, reports)
	}
	return 0
}

type pkgInfo struct {
	ImportPath string
	Dir        string
	GoFiles    []string
}

func listPackage(ctx context.Context, o options, pkg string) (pkgInfo, error) {
	out, err := exec.CommandContext(ctx, o.goCmd, "list", "-json=ImportPath,Dir,GoFiles", pkg).Output()
	if err != nil {
		return pkgInfo{}, fmt.Errorf("go list: %w", err)
	}
	var info pkgInfo
	if err := json.Unmarshal(out, &info); err != nil {
		return pkgInfo{}, fmt.Errorf("go list: %w", err)
	}
	return info, nil
}

// rel names a file relative to the working directory when it is below it.
func rel(path string) string {
	wd, err := os.Getwd()
	if err != nil {
		return path
	}
	if r, err := filepath.Rel(wd, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

func where(m mutant) string { return fmt.Sprintf("%s:%d:%d", rel(m.File), m.Line, m.Col) }

func mutatePackage(ctx context.Context, o options, pkg string, stdout io.Writer) (pkgReport, error) {
	start := time.Now()
	info, err := listPackage(ctx, o, pkg)
	if err != nil {
		return pkgReport{}, err
	}
	var files []string
	for _, f := range info.GoFiles {
		files = append(files, filepath.Join(info.Dir, f))
	}
	all, err := packageMutants(files)
	if err != nil {
		return pkgReport{}, err
	}
	if o.match != nil {
		kept := all[:0]
		for _, m := range all {
			if o.match.MatchString(fmt.Sprintf("%s:%d", rel(m.File), m.Line)) {
				kept = append(kept, m)
			}
		}
		all = kept
	}
	rep := pkgReport{pkg: info.ImportPath, candidates: len(all)}

	// The unmutated run: the tests must pass, and it gives the coverage
	// and the time a run takes.
	profile := filepath.Join(o.tmp, "cover.out")
	t0 := time.Now()
	if out, err := goTest(ctx, o, pkg, 0, "-covermode=set", "-coverprofile="+profile); err != nil {
		return rep, fmt.Errorf("the tests fail unmutated: %v\n%s", err, out)
	}
	base := time.Since(t0)
	timeout := o.timeout
	if timeout == 0 {
		timeout = 3*base + time.Minute
	}
	var cov coverage
	if o.cover {
		f, err := os.Open(profile)
		if err != nil {
			return rep, err
		}
		cov, err = parseCoverage(f)
		f.Close()
		if err != nil {
			return rep, err
		}
	}

	// The sample: the mutants on covered code shuffled by the seed, run
	// in that order until n of them compiled.
	rng := rand.New(rand.NewPCG(o.seed, o.seed^0x9e3779b97f4a7c15))
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	var order []mutant
	for _, m := range all {
		if o.cover && !cov.covered(filepath.Base(m.File), m.Line, m.Col) {
			rep.uncovered++
			continue
		}
		order = append(order, m)
	}
	want := o.n
	if want <= 0 {
		want = len(order)
	}
	fmt.Fprintf(stdout, "== %s: %d mutants, %d on code the tests do not cover; running %d that compile (seed %d), unmutated run %s, timeout %s\n",
		rep.pkg, rep.candidates, rep.uncovered, min(want, len(order)), o.seed, base.Round(100*time.Millisecond), timeout.Round(time.Second))
	for i, m := range order {
		if rep.killed+rep.survived == want || o.dry && i == want {
			break
		}
		if o.dry {
			fmt.Fprintf(stdout, "%-10s %s %s\n", "sampled", where(m), m)
			continue
		}
		r, err := runMutant(ctx, o, pkg, m, i, timeout)
		if err != nil {
			return rep, err
		}
		switch r.outcome {
		case killed:
			rep.killed++
			if r.by == "timeout" {
				rep.timedOut++
			}
		case survived:
			rep.survived++
			rep.survivors = append(rep.survivors, r)
		case notViable:
			rep.notViable++
		}
		by := ""
		if r.by != "" {
			by = " (" + r.by + ")"
		}
		fmt.Fprintf(stdout, "%-10s %s %s%s\n", r.outcome, where(m), m, by)
	}
	rep.elapsed = time.Since(start)
	return rep, nil
}

var failLine = regexp.MustCompile(`(?m)^\s*--- FAIL: (\S+)`)

func runMutant(ctx context.Context, o options, pkg string, m mutant, i int, timeout time.Duration) (result, error) {
	src, err := os.ReadFile(m.File)
	if err != nil {
		return result{}, err
	}
	mutated := filepath.Join(o.tmp, strconv.Itoa(i)+"_"+filepath.Base(m.File))
	if err := os.WriteFile(mutated, m.apply(src), 0o600); err != nil {
		return result{}, err
	}
	defer os.Remove(mutated)
	overlay := filepath.Join(o.tmp, "overlay.json")
	ov, _ := json.Marshal(map[string]map[string]string{"Replace": {m.File: mutated}})
	if err := os.WriteFile(overlay, ov, 0o600); err != nil {
		return result{}, err
	}
	out, err := goTest(ctx, o, pkg, timeout, "-overlay="+overlay)
	r := result{m: m}
	var ee *exec.ExitError
	switch {
	case err == nil:
		r.outcome = survived
	case bytes.Contains(out, []byte("[build failed]")) || bytes.Contains(out, []byte("[setup failed]")):
		r.outcome = notViable
	case errors.As(err, &ee) || errors.Is(err, context.DeadlineExceeded):
		r.outcome = killed
		if bytes.Contains(out, []byte("panic: test timed out")) || errors.Is(err, context.DeadlineExceeded) {
			r.by = "timeout"
		} else if f := failLine.FindSubmatch(out); f != nil {
			r.by = string(f[1])
		} else {
			r.by = "exit " + strconv.Itoa(ee.ExitCode())
		}
	default:
		return result{}, err
	}
	return r, nil
}

// goTest runs go test on pkg with extra flags; a timeout above zero is the
// tests' own, and the command is stopped a minute after it.
func goTest(ctx context.Context, o options, pkg string, timeout time.Duration, extra ...string) ([]byte, error) {
	args := []string{"test", "-p", strconv.Itoa(o.p), "-count=1"}
	if timeout > 0 {
		args = append(args, "-timeout", timeout.String())
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout+time.Minute)
		defer cancel()
	}
	args = append(append(args, extra...), pkg)
	cmd := exec.CommandContext(ctx, o.goCmd, args...)
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return out, ctx.Err()
	}
	return out, err
}

func summary(w io.Writer, o options, reports []pkgReport) {
	fmt.Fprintf(w, "\n== summary (seed %d, up to %d mutants per package, cover %v)\n\n", o.seed, o.n, o.cover)
	fmt.Fprintln(w, "| package | killed | survived | not viable | timed out (killed) | not covered | score | time |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, r := range reports {
		fmt.Fprintf(w, "| `%s` | %d | %d | %d | %d | %d of %d | %.2f | %s |\n", r.pkg, r.killed, r.survived, r.notViable, r.timedOut,
			r.uncovered, r.candidates, r.score(), r.elapsed.Round(time.Second))
	}
	for _, r := range reports {
		if len(r.survivors) == 0 {
			continue
		}
		fmt.Fprintf(w, "\nsurvivors in %s:\n", r.pkg)
		for _, s := range r.survivors {
			fmt.Fprintf(w, "  %s %s\n", where(s.m), s.m)
		}
	}
}
