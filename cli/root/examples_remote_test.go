package root_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/mecha-agent/mecha/testkit/s3test"
)

// exampleWorld is a remote on a real S3 server with two pinned sessions,
// and the environment a machine of the examples runs mecha in.
type exampleWorld struct {
	t    *testing.T
	dir  string
	base []string // the environment without MECHA_HOME
	cfg  string
}

func newExampleWorld(t *testing.T) *exampleWorld {
	srv := s3test.Start(t)
	srv.Bucket("examples")
	w := &exampleWorld{t: t, dir: t.TempDir()}
	w.base = append(os.Environ(), "AWS_ACCESS_KEY_ID="+s3test.AccessKey, "AWS_SECRET_ACCESS_KEY="+s3test.SecretKey, "TZ=UTC", "NO_COLOR=1")
	cfg := "[remotes.team]\nurl = \"s3://examples/team\"\nendpoint = \"" + srv.Endpoint + "\"\npath_style = true\n"
	ws := filepath.Join(w.dir, "ws")
	os.MkdirAll(ws, 0o700)
	os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("notes\n"), 0o600)
	w.cfg = cfg
	dev := w.home("dev")
	for _, task := range []string{"what is here?", "and here?"} {
		w.run(dev, ws, nil, "mecha", "run", task)
	}
	ents, _ := os.ReadDir(filepath.Join(dev, "sessions"))
	for _, e := range ents {
		if id, ok := strings.CutSuffix(e.Name(), ".jsonl"); ok {
			w.run(dev, ws, nil, "mecha", "regress", "pin", id, "--remote", "team")
		}
	}
	return w
}

// home makes a mecha home with the remote configured.
func (w *exampleWorld) home(name string) string {
	h := filepath.Join(w.dir, name)
	if err := os.MkdirAll(h, 0o700); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h, "config.toml"), []byte(w.cfg), 0o600); err != nil {
		w.t.Fatal(err)
	}
	return h
}

// run runs a command in home and dir with extra variables, and returns
// its stdout; a failure fails the test.
func (w *exampleWorld) run(home, dir string, extra []string, name string, args ...string) string {
	w.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(append(append([]string{}, w.base...), "MECHA_HOME="+home, "MECHA_SESSION_DIR="+filepath.Join(home, "sessions"), "HOME="+home), extra...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, io.MultiWriter(&errb)
	if err := cmd.Run(); err != nil {
		w.t.Fatalf("%s %q: %v\n%s%s", name, args, err, out.String(), errb.String())
	}
	return out.String()
}

// The Kubernetes example: every Job document's container command, run for
// each index of an Indexed Job with JOB_COMPLETION_INDEX set, $(VAR) from
// the container's env, each pod a home of its own (MECHA_HOME is the
// manifest's /mecha, here a directory per pod).
func TestExampleKubernetesIndexedJob(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "kubernetes", "regress-indexed-job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	type container struct {
		Command    []string `yaml:"command"`
		WorkingDir string   `yaml:"workingDir"`
		Env        []struct{ Name, Value string }
	}
	type job struct {
		Kind     string
		Metadata struct{ Name string }
		Spec     struct {
			CompletionMode string `yaml:"completionMode"`
			Completions    int
			Template       struct {
				Spec struct{ Containers []container }
			}
		}
	}
	var jobs []job
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var j job
		if err := dec.Decode(&j); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, j)
	}
	if len(jobs) != 2 || jobs[0].Spec.CompletionMode != "Indexed" || jobs[0].Spec.Completions != 2 {
		t.Fatalf("the manifest is not an Indexed Job of 2 and a report Job: %+v", jobs)
	}
	w := newExampleWorld(t)
	ran := 0
	for _, j := range jobs {
		if j.Kind != "Job" {
			t.Fatalf("a %s in the manifest", j.Kind)
		}
		n := max(j.Spec.Completions, 1)
		for i := 0; i < n; i++ {
			for _, c := range j.Spec.Template.Spec.Containers {
				env := map[string]string{}
				var extra []string
				for _, e := range c.Env {
					env[e.Name] = e.Value
					if e.Name != "MECHA_HOME" {
						extra = append(extra, e.Name+"="+e.Value)
					}
				}
				if j.Spec.CompletionMode == "Indexed" {
					extra = append(extra, "JOB_COMPLETION_INDEX="+strconv.Itoa(i))
				}
				args := make([]string, len(c.Command))
				for k, a := range c.Command {
					args[k] = regexp.MustCompile(`\$\(([A-Z_]+)\)`).ReplaceAllStringFunc(a, func(m string) string { return env[m[2:len(m)-1]] })
				}
				home := w.home(j.Metadata.Name + "-" + strconv.Itoa(i))
				wd := t.TempDir()
				out := w.run(home, wd, extra, args[0], args[1:]...)
				ran++
				if strings.Contains(strings.Join(args, " "), "report") {
					if !strings.Contains(out, "2 pinned: 2 clean") {
						t.Fatalf("the report: %s", out)
					}
					if _, err := os.Stat(filepath.Join(wd, "regress.xml")); err != nil {
						t.Fatalf("no JUnit file: %v", err)
					}
				}
			}
		}
	}
	if ran != 3 {
		t.Fatalf("ran %d commands, want 3 (two shards and the report)", ran)
	}
}

// The GitHub Actions example: each job's steps that run mecha, once per
// matrix value, the ${{ }} expressions replaced, the jobs in the order
// their needs give; the steps that install mecha are this test's binary.
func TestExampleGitHubActionsMatrix(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "github-actions", "regress.yml"))
	if err != nil {
		t.Fatal(err)
	}
	type step struct{ Run string }
	type wfJob struct {
		Needs    string
		Strategy struct {
			Matrix struct{ Shard []int }
		}
		Steps []step
	}
	var wf struct {
		Jobs map[string]wfJob
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatal(err)
	}
	reg, rep := wf.Jobs["regress"], wf.Jobs["report"]
	if len(reg.Strategy.Matrix.Shard) != 2 || rep.Needs != "regress" {
		t.Fatalf("the workflow is not a matrix of 2 shards and a report that needs it: %+v", wf)
	}
	w := newExampleWorld(t)
	expr := regexp.MustCompile(`\$\{\{\s*([a-z_.]+)\s*\}\}`)
	runSteps := func(j wfJob, shard int, home string) (string, string) {
		wd := t.TempDir()
		var out string
		n := 0
		for _, s := range j.Steps {
			if !strings.HasPrefix(s.Run, "mecha ") {
				continue
			}
			line := expr.ReplaceAllStringFunc(s.Run, func(m string) string {
				switch expr.FindStringSubmatch(m)[1] {
				case "matrix.shard":
					return strconv.Itoa(shard)
				case "github.run_id":
					return "4242"
				case "github.run_attempt":
					return "1"
				}
				t.Fatalf("an expression the test does not know: %s", m)
				return ""
			})
			out += w.run(home, wd, nil, "sh", "-c", line)
			n++
		}
		if n != 1 {
			t.Fatalf("a job runs %d mecha steps, want 1", n)
		}
		return out, wd
	}
	for _, shard := range reg.Strategy.Matrix.Shard {
		runSteps(reg, shard, w.home("runner-"+strconv.Itoa(shard)))
	}
	out, wd := runSteps(rep, 0, w.home("report"))
	if !strings.Contains(out, "2 pinned: 2 clean") {
		t.Fatalf("the report: %s", out)
	}
	if _, err := os.Stat(filepath.Join(wd, "regress.xml")); err != nil {
		t.Fatalf("no JUnit file: %v", err)
	}
}
