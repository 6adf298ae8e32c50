package sessionscmd

import (
	"bufio"
	"context"
	"fmt"
	"slices"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/remote"
)

// listRemote lists a remote's index: one request.
func listRemote(ctx context.Context, opts *ListOptions) error {
	if opts.Workspace != "" || opts.NoChildren {
		return cmdkit.Usagef("--remote lists the index, which keeps no workspace or parent: drop --workspace and --no-children")
	}
	r, err := openRemote(opts.Env, opts.Remote)
	if err != nil {
		return err
	}
	ix, _, err := r.ReadIndex(ctx)
	if err != nil {
		return err
	}
	rows := []*remote.Entry{}
	for _, e := range ix.Sorted() {
		switch {
		case len(opts.Kinds) > 0 && !slices.Contains(opts.Kinds, e.Kind):
			continue
		case opts.NoReplays && (e.Kind == "replay" || e.Kind == "rerun"):
			continue
		case !opts.SinceTime.IsZero() && e.CreatedAt.Before(opts.SinceTime):
			continue
		}
		rows = append(rows, e)
		if opts.Limit > 0 && len(rows) == opts.Limit {
			break
		}
	}
	if opts.JSON {
		return cmdkit.WriteJSON(opts.Env.Out, rows)
	}
	if len(rows) == 0 {
		fmt.Fprintf(opts.Env.Err, "no sessions on %s\n", r.Name)
		return nil
	}
	idW, modelW, whoW := len("ID"), len("PROVIDER/MODEL"), len("PUSHED BY")
	for _, e := range rows {
		idW = max(idW, width(textfmt.VisibleLine(e.ID)))
		modelW = max(modelW, width(textfmt.VisibleLine(e.Provider+"/"+e.Model)))
		whoW = max(whoW, width(textfmt.VisibleLine(e.PushedBy)))
	}
	st := cmdkit.NewStyle(opts.Env)
	w := bufio.NewWriterSize(opts.Env.Out, 64<<10)
	w.WriteString(st.Bold(pad("ID", idW+2) + pad("CREATED", 18) + pad("KIND", len("reflection")+2) + pad("PROVIDER/MODEL", modelW+2) +
		padLeft("SIZE", 10) + "  " + pad("PUSHED BY", whoW+2) + "TITLE"))
	w.WriteByte('\n')
	for _, e := range rows {
		w.WriteString(pad(textfmt.VisibleLine(e.ID), idW+2))
		w.WriteString(e.CreatedAt.In(opts.Env.Zone()).Format("2006-01-02 15:04"))
		w.WriteString("  ")
		w.WriteString(pad(textfmt.VisibleLine(e.Kind), len("reflection")+2))
		w.WriteString(pad(textfmt.VisibleLine(e.Provider+"/"+e.Model), modelW+2))
		w.WriteString(padLeft(byteSize(e.Size), 10))
		w.WriteString("  ")
		w.WriteString(pad(textfmt.VisibleLine(e.PushedBy), whoW+2))
		w.WriteString(textfmt.Clip(textfmt.VisibleLine(e.Title), 70))
		w.WriteByte('\n')
	}
	return w.Flush()
}
