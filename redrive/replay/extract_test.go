package replay

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

func msg(role string, blocks ...transcript.Block) *transcript.Message {
	return &transcript.Message{Role: role, Content: blocks}
}

func text(s string) transcript.Block { return transcript.TextBlock(s) }

func use(id, name, in string) transcript.Block {
	return transcript.ToolUseBlock(id, name, json.RawMessage(in))
}

func result(id, content string) transcript.Block {
	return transcript.ToolResultBlock(id, content, false)
}

func TestExtract(t *testing.T) {
	t.Parallel()
	c1 := &transcript.Config{Provider: "mock", Model: "m1", Tools: []string{"fs_read"}}
	c2 := &transcript.Config{Provider: "mock", Model: "m2"}
	s := &session.Session{Records: []transcript.Record{
		c1,
		msg("user", text("first task")),
		msg("assistant", text("looking"), use("a", "fs_read", `{"path":"x"}`), use("b", "fs_list", `{}`)),
		// Parallel calls answered out of order, with steering beside them.
		msg("user", result("b", "list"), result("a", "read x"), text("also check y")),
		msg("assistant", use("c", "fs_read", `{"path":"y"}`)),
		msg("user", result("c", "read y")),
		msg("assistant", text("done one")),
		&transcript.Taint{Private: true},
		&transcript.Summary{Turns: 3},
		c2,
		msg("user", text("second task")),
		msg("assistant", use("d", "shell", `{"command":"ls"}`)),
		// The session died here: d has no result.
		&transcript.Config{Provider: "mock", Model: "m2"},
		// A resume answered d with a made-up result, and an older build's
		// resume answered e in its own words: neither is a recorded result.
		msg("user", transcript.UnknownOutcomeBlock("d", "outcome unknown")),
		msg("user", text("go on")),
		msg("assistant", use("e", "shell", `{"command":"rm x"}`)),
		msg("user", transcript.ToolResultBlock("e", "not run: the session ended before this call ran", true)),
		msg("user", text("again")),
	}}
	traj, err := Extract(s)
	if err != nil {
		t.Fatal(err)
	}
	if !traj.Steered || len(traj.Turns) != 4 || traj.Text != "done one" {
		t.Fatalf("trajectory = %+v", traj)
	}
	t1, t2 := traj.Turns[0], traj.Turns[1]
	if t1.Prompt != "first task" || t1.Config != c1 || t1.Text != "done one" || t2.Prompt != "second task" || t2.Config != c2 {
		t.Errorf("turns = %+v / %+v", t1, t2)
	}
	var got []string
	for _, c := range traj.Calls() {
		got = append(got, c.ID+":"+c.Name+":"+c.Result)
	}
	want := []string{"a:fs_read:read x", "b:fs_list:list", "c:fs_read:read y", "d:shell:", "e:shell:"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("calls = %v", got)
	}
	for _, c := range traj.Calls()[3:] {
		if c.HasResult {
			t.Errorf("a call whose result was never recorded has one: %+v", c)
		}
	}
}

func TestExtractToolResultOnlyMessagesAreNotTurns(t *testing.T) {
	t.Parallel()
	s := &session.Session{Records: []transcript.Record{
		&transcript.Config{},
		msg("user", text("task")),
		msg("assistant", use("a", "fs_read", `{}`)),
		msg("user", result("a", "r")),
		msg("assistant", use("b", "fs_read", `{}`)),
		msg("user", result("b", "r")),
		msg("assistant", text("ok")),
	}}
	traj, err := Extract(s)
	if err != nil || len(traj.Turns) != 1 || len(traj.Turns[0].Calls) != 2 || traj.Steered {
		t.Fatalf("%+v, %v", traj, err)
	}
}

func TestExtractNeedsConfig(t *testing.T) {
	t.Parallel()
	s := &session.Session{Records: []transcript.Record{msg("user", text("task")), msg("assistant", text("ok"))}}
	if _, err := Extract(s); !errors.Is(err, ErrNoConfig) {
		t.Errorf("err = %v", err)
	}
	if _, err := Extract(&session.Session{}); !errors.Is(err, ErrNoConfig) {
		t.Errorf("empty: err = %v", err)
	}
}

// A result is looked for only before the model's next message, where the
// harness records it; sessionview does the pairing for show and replay alike.
func TestExtractPairsWithinAnExchange(t *testing.T) {
	t.Parallel()
	s := &session.Session{Records: []transcript.Record{
		&transcript.Config{},
		msg("user", text("task")),
		msg("assistant", use("a", "fs_read", `{}`)),
		msg("assistant", use("b", "fs_read", `{}`)),
		msg("user", result("b", "rb"), result("a", "late")),
	}}
	traj, err := Extract(s)
	if err != nil {
		t.Fatal(err)
	}
	calls := traj.Calls()
	if len(calls) != 2 || calls[0].HasResult || calls[1].Result != "rb" {
		t.Errorf("calls = %+v", calls)
	}
}
