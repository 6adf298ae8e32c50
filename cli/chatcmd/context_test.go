package chatcmd

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
	"github.com/mecha-agent/mecha/testkit/fakellm"
)

// requestMessages is the text of each message of the model request n
// (0-based) the fake server received, one string per message.
func requestMessages(t *testing.T, srv *fakellm.Server, n int) []string {
	t.Helper()
	reqs := srv.Requests()
	if n >= len(reqs) {
		t.Fatalf("request %d of %d", n, len(reqs))
	}
	var body struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(reqs[n].Body, &body); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range body.Messages {
		out = append(out, string(m.Content))
	}
	return out
}

// compactions are the compaction records of s.
func compactions(s *session.Session) []*transcript.Compaction {
	var out []*transcript.Compaction
	for _, r := range s.Records {
		if c, ok := r.(*transcript.Compaction); ok {
			out = append(out, c)
		}
	}
	return out
}

// TestChatCompact: /compact with instructions replaces the conversation
// before the last answer by the summary the model writes (the
// instructions in its request), recorded as a compaction record, and the
// next prompt's request starts from that summary; a resumed run sees the
// same context.
func TestChatCompact(t *testing.T) {
	c := startChat(t, []fakellm.Turn{
		{Text: "First answer."},
		{Text: "Second answer."},
		{Text: "SUMMARY: the user said one and two."},
		{Text: "Third answer."},
	})
	c.enter("/compact")
	c.waitFor("nothing to compact yet")
	c.prompt("one", "First answer.")
	c.prompt("two", "Second answer.")
	c.enter("/compact keep the word banana")
	c.waitFor("compacted: 3 earlier messages replaced by a summary")
	c.waitFor("ready · ")
	c.prompt("three", "Third answer.")
	c.quit()

	compaction := requestMessages(t, c.srv, 2)
	if last := compaction[len(compaction)-1]; !strings.Contains(last, "keep the word banana") || !strings.Contains(last, "Write that summary") {
		t.Errorf("the compaction's request ends with %s; want the instruction and the person's words", last)
	}
	next := requestMessages(t, c.srv, 3)
	if len(next) != 3 || !strings.Contains(next[0], "SUMMARY: the user said one and two.") ||
		!strings.Contains(next[1], "Second answer.") || !strings.Contains(next[2], "three") {
		t.Errorf("the prompt after /compact sent %q; want the summary, the last answer, the prompt", next)
	}
	s := c.onlySession()
	cs := compactions(s)
	if len(cs) != 1 || cs[0].Replaces != 3 || cs[0].Summary != "SUMMARY: the user said one and two." {
		t.Fatalf("compaction records: %+v; want one replacing 3 messages", cs)
	}
	if ctx := s.Context(); len(ctx) != 4 || !strings.Contains(transcript.TextOf(ctx[0].Content), "SUMMARY") {
		t.Errorf("the session's context after the chat: %d messages", len(ctx))
	}
	sums := s.Summaries()
	if len(sums) != 4 || sums[2].StopReason != "compacted" || sums[2].Usage.OutputTokens == 0 {
		t.Errorf("summaries: %+v; want the compaction's own, with its usage", sums)
	}
}

// TestChatAutoCompacts: the chat compacts at --compact-at-tokens as a run
// does, says so, and records the compaction.
func TestChatAutoCompacts(t *testing.T) {
	big := &transcript.Usage{InputTokens: 5000, OutputTokens: 10}
	c := startChat(t, []fakellm.Turn{
		{Text: "First answer.", Usage: big},
		{Text: "SUMMARY of the first prompt."},
		{Text: "Second answer."},
	}, "--compact-at-tokens", "1000", "--compact-keep-recent", "1")
	c.prompt("one", "First answer.")
	c.enter("two")
	c.waitFor("compacted: 1 earlier message replaced by a summary")
	c.waitFor("Second answer.")
	c.waitFor("ready · ")
	c.quit()
	cs := compactions(c.onlySession())
	if len(cs) != 1 || cs[0].Replaces != 1 {
		t.Fatalf("compaction records: %+v; want one, replacing the first prompt", cs)
	}
	if next := requestMessages(t, c.srv, 2); len(next) != 3 || !strings.Contains(next[0], "SUMMARY of the first prompt.") {
		t.Errorf("the request after the compaction: %q", next)
	}
}

// TestChatClear: /clear starts a new session: the next prompt's request
// holds that prompt alone, and the first session is left as it was.
func TestChatClear(t *testing.T) {
	c := startChat(t, []fakellm.Turn{
		{Text: "First answer."},
		{Text: "Fresh answer."},
	})
	c.prompt("remember the word banana", "First answer.")
	first := c.eng.current()
	c.enter("/clear")
	c.waitFor("new session")
	c.prompt("what word?", "Fresh answer.")
	second := c.eng.current()
	c.quit()
	if second.IsZero() || second == first {
		t.Fatalf("/clear kept the session %s", first.ID)
	}
	if got := requestMessages(t, c.srv, 1); len(got) != 1 || strings.Contains(got[0], "banana") {
		t.Errorf("the request after /clear: %q; want the new prompt alone", got)
	}
	s, err := c.store().Load(first)
	if err != nil || len(s.Messages()) != 2 {
		t.Errorf("the first session: %v", err)
	}
}

// TestChatTitle: --title names the chat's first session, as run's does,
// and not the one /new starts after it.
func TestChatTitle(t *testing.T) {
	c := startChat(t, []fakellm.Turn{{Text: "One."}, {Text: "Two."}}, "--title", "my chat")
	c.prompt("first prompt", "One.")
	first := c.eng.current()
	c.enter("/new")
	c.waitFor("new session")
	c.prompt("second prompt", "Two.")
	second := c.eng.current()
	c.quit()
	for ref, want := range map[session.Ref]string{first: "my chat", second: "second prompt"} {
		s, err := c.store().Load(ref)
		if err != nil || s.Meta.Title != want {
			t.Errorf("session %s: title %q, %v; want %q", ref.ID, s.Meta.Title, err, want)
		}
	}
}
