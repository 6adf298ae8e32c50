package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/record/transcript"
)

// TestAskRecordsAToolLessAttach: a question is recorded as a session of
// its own with the Attach's Meta, under a question's configuration (no
// tool, one call, read-only, no sandbox; the workspace only recorded,
// though it is gone), its prompt covered by a checkpoint before the
// answer, and named on Err with what it says.
func TestAskRecordsAToolLessAttach(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	var errb bytes.Buffer
	w := &World{Getenv: func(k string) string { return map[string]string{"MECHA_HOME": home}[k] }, Err: &errb, Version: "test"}
	s := DefaultSettings()
	s.Workspace = filepath.Join(home, "gone")
	att, err := Ask(context.Background(), w, Attach{Settings: s, Meta: transcript.Meta{ReflectsOn: "X", Title: "a reflection"}},
		Question{System: "be brief", Prompt: "what happened?", Taint: transcript.Taint{Private: true}, TaintWhy: "X", Says: "reflects on X"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := w.Store()
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.Load(att.Session)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, r := range got.Records {
		kinds = append(kinds, r.Kind())
	}
	if k := strings.Join(kinds, " "); k != "config message taint message taint summary" {
		t.Errorf("records: %s", k)
	}
	if m := got.Meta; m.ReflectsOn != "X" || m.Title != "a reflection" || m.Provider != "mock" || m.Model != "mock-1" || m.Workspace != s.Workspace {
		t.Errorf("header %+v", m)
	}
	rc, _ := json.Marshal(got.Configs()[0])
	for _, want := range []string{`"mecha_version":"test"`, `"system_prompt":"be brief"`, `"tools":[]`, `"tool_specs":[]`, `"max_turns":1`,
		`"max_tokens":4096`, `"compact_keep_recent":6`, `"permission_mode":"read-only"`, `"trifecta":"refuse"`, `"sandbox":"none"`} {
		if !strings.Contains(string(rc), want) {
			t.Errorf("config %s lacks %s", rc, want)
		}
	}
	if got.Taint() != (transcript.Taint{Private: true}) {
		t.Errorf("taint %+v", got.Taint())
	}
	if want := "session: " + att.Session.ID + " reflects on X (mock/mock-1)\n"; errb.String() != want {
		t.Errorf("Err %q, want %q", errb.String(), want)
	}
}
