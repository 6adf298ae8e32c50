package replaycmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/redrive/replay"
)

// maxDeep bounds how far down --deep follows children of children: mecha
// starts none (a child is never given the agent tool), so this only
// guards against a store whose headers make a cycle.
const maxDeep = 8

// replayChildren replays, with the same settings, each child session of s
// (ref) found beside it, and theirs, and adds them to rep under
// the calls that started them. A child that cannot be replayed is reported
// refused; an interrupt or a failure of the replay itself is returned.
func replayChildren(ctx context.Context, env *cmdkit.Env, set Settings, s *session.Session, ref session.Ref, rep *replay.Report, depth int) error {
	if depth >= maxDeep {
		return nil
	}
	store, err := env.Store()
	if err != nil {
		return err
	}
	kids, err := store.Children(ref)
	if err != nil {
		return err
	}
	for _, k := range kids {
		child := replay.Child{CallID: k.Meta.Parent.CallID, Index: replay.CallIndex(s, k.Meta.Parent.CallID), Session: k.Meta.ID}
		fmt.Fprintf(env.Err, "replay --deep: child session %s (call %s)\n", k.Meta.ID, child.CallID)
		ks, err := store.Load(k.Ref)
		if err != nil {
			child.Report = &replay.Report{Session: k.Meta.ID, Status: replay.StatusRefused, Reason: err.Error(), Divergences: []replay.Divergence{}}
			rep.Children = append(rep.Children, child)
			continue
		}
		d, err := Open(ctx, env, ks, set)
		if err != nil {
			return err
		}
		child.Report, err = d.Replay(ctx, env.Err)
		d.Close()
		if err != nil && (child.Report == nil || child.Report.Status != replay.StatusRefused) {
			return err
		}
		if err := replayChildren(ctx, env, set, ks, k.Ref, child.Report, depth+1); err != nil {
			return err
		}
		rep.Children = append(rep.Children, child)
	}
	return nil
}

// printChildren writes each child's replay under the call that started
// it, indented.
func printChildren(w io.Writer, st textfmt.Style, children []replay.Child) {
	for _, c := range children {
		at := "call " + c.CallID
		if c.Index >= 0 {
			at = fmt.Sprintf("call #%d", c.Index)
		}
		fmt.Fprintf(w, "⤷ %s (agent): child session %s\n", at, c.Session)
		var b bytes.Buffer
		if c.Report.Status == replay.StatusRefused {
			fmt.Fprintf(&b, "%s: %s\n", st.Red("refused"), c.Report.Reason)
		} else {
			printReport(&b, st, c.Report)
		}
		for line := range strings.Lines(b.String()) {
			fmt.Fprint(w, "    "+line)
		}
	}
}
