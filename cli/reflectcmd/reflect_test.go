package reflectcmd

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/engine/provider/mock"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
	"github.com/mecha-agent/mecha/testkit/cmdtest"
)

func TestReflectFlags(t *testing.T) {
	t.Parallel()
	var got *Options
	cmd := NewCmdReflect(&cmdkit.Env{}, func(_ context.Context, o *Options) error { got = o; return nil })
	if err := cmdtest.Execute(cmd, "-p", "local", "-m", "qwen", "--request-timeout", "5s", "last"); err != nil {
		t.Fatal(err)
	}
	if got.ID != "last" || got.Provider != "local" || got.Model != "qwen" || got.RequestTimeout != 5*time.Second {
		t.Errorf("parsed %+v", got)
	}
	for _, args := range [][]string{nil, {"a", "b"}, {"--mock-script", "s.json", "-p", "local", "x"}} {
		cmd := NewCmdReflect(&cmdkit.Env{}, func(context.Context, *Options) error { t.Error("ran despite bad usage"); return nil })
		var ue *cmdkit.UsageError
		if err := cmdtest.Execute(cmd, args...); !errors.As(err, &ue) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
}

func env(t *testing.T) (*cmdkit.Env, string) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	return &cmdkit.Env{Out: &out, Err: &errb, Vars: func(k string) string {
		switch k {
		case "MECHA_SESSION_DIR", "MECHA_HOME":
			return dir
		}
		return ""
	}}, dir
}

// reflected writes a session to reflect on; covered says whether a taint
// checkpoint follows its messages.
func reflected(t *testing.T, dir string, covered *transcript.Taint) *session.Session {
	st := &session.Store{Dir: dir}
	w, err := st.Create(transcript.Meta{Title: "the task", Workspace: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	recs := []transcript.Record{
		&transcript.Message{Role: "user", Content: []transcript.Block{transcript.TextBlock("the task")}},
		&transcript.Message{Role: "assistant", Content: []transcript.Block{transcript.TextBlock("done")}},
	}
	if covered != nil {
		recs = append(recs, covered)
	}
	if err := w.Append(recs...); err != nil {
		t.Fatal(err)
	}
	w.Close()
	s, err := st.Load(w.Ref())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestJobRecordsTheCheckpointBeforeTheAnswer(t *testing.T) {
	for _, c := range []struct {
		name    string
		covered *transcript.Taint
		want    transcript.Taint
		unknown int
	}{
		{"private", &transcript.Taint{Private: true}, transcript.Taint{Private: true}, 0},
		{"armed", &transcript.Taint{Private: true, Untrusted: true}, transcript.Taint{Private: true, Untrusted: true}, 0},
		{"uncovered", nil, transcript.Taint{Private: true, Untrusted: true}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, dir := env(t)
			of := reflected(t, dir, c.covered)
			prov := mock.New(&mock.Script{Turns: []mock.Turn{{Text: "It went well.\n- Say what changed (#1)."}}})
			res, err := Job{Env: e, Settings: On("mock", "mock-1"), Provider: prov, Of: of}.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if res.Taint != c.want || res.Unknown != c.unknown || res.Rules != 1 {
				t.Errorf("result %+v", res)
			}
			st := &session.Store{Dir: dir}
			ref, _ := st.Resolve(res.ID)
			s, err := st.Load(ref)
			if err != nil {
				t.Fatal(err)
			}
			if s.Meta.ReflectsOn != of.Meta.ID {
				t.Errorf("reflects_on %q", s.Meta.ReflectsOn)
			}
			var kinds []string
			for _, r := range s.Records {
				kinds = append(kinds, r.Kind())
			}
			if got := strings.Join(kinds, " "); got != "config message taint message taint summary" {
				t.Errorf("records: %s", got)
			}
			if got := s.Taint(); got != c.want {
				t.Errorf("recorded taint %+v, want %+v", got, c.want)
			}
			if !strings.Contains(transcript.TextOf(s.Messages()[0].Content), "#1 assistant:\ndone") {
				t.Errorf("prompt: %s", transcript.TextOf(s.Messages()[0].Content))
			}
		})
	}
}

func TestJobFailsWithoutAnAnswer(t *testing.T) {
	e, dir := env(t)
	of := reflected(t, dir, &transcript.Taint{})
	prov := mock.New(&mock.Script{Turns: []mock.Turn{{Error: &mock.TurnError{Status: 400, Message: "bad request"}}}})
	if _, err := (Job{Env: e, Settings: On("mock", "mock-1"), Provider: prov, Of: of}).Run(context.Background()); err == nil {
		t.Fatal("a failed model call made a reflection")
	}
}
