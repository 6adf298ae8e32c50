package sessionscmd

import (
	"fmt"
	"io"
	"slices"

	"github.com/mecha-agent/mecha/internal/buildinfo"
	"github.com/mecha-agent/mecha/record/inspectlog"
	"github.com/mecha-agent/mecha/record/session"
)

// inspectHelp is the inspect format's entry in export's help.
const inspectHelp = `
  inspect  the sessions as one eval log of Inspect (the UK AISI's
        inspect_ai; its JSON format, version 2), which "inspect view" and
        Docent open: each session a sample, and each subagent's child
        session too (after its parent, its parent call in its metadata).
        A sample holds the system prompt and the conversation (text,
        thinking, tool calls and results, an error result as an error),
        the model, the usage per model, the times, and in its metadata
        the session's ids, title, workspace and taint. It takes several
        ids; name the file .json, as Inspect reads it by its extension
        (and lists it in a log directory only when its name starts with
        a time, 2026-12-01T10-00-00...).`

// exportInspect writes the sessions named by ids, and their children, as
// one Inspect eval log.
func exportInspect(opts *ExportOptions) error {
	store, err := opts.Env.Store()
	if err != nil {
		return err
	}
	cfg, err := opts.Env.Config()
	if err != nil {
		return err
	}
	var samples []inspectlog.Sample
	var seen []string
	var add func(ref session.Ref, depth int) error
	add = func(ref session.Ref, depth int) error {
		if slices.Contains(seen, ref.ID) || depth > 8 { // a store whose headers make a cycle
			return nil
		}
		seen = append(seen, ref.ID)
		s, err := store.Load(ref)
		if err != nil {
			return err
		}
		samples = append(samples, inspectlog.FromSession(s, cfg.Prices()))
		kids, err := store.Children(ref)
		if err != nil {
			return err
		}
		for _, k := range kids {
			if err := add(k.Ref, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	for _, id := range opts.IDs {
		ref, err := store.Resolve(id)
		if err != nil {
			return err
		}
		if err := add(ref, 0); err != nil {
			return err
		}
	}
	log := inspectlog.New("mecha-sessions", logModel(samples), buildinfo.Version(), opts.Env.Clock.Now(), samples)
	write := func(w io.Writer) error { return inspectlog.Write(w, log) }
	if opts.Output == "" || opts.Output == "-" {
		return toOut(opts.Env, write)
	}
	return writeFile(opts.Output, write)
}

// logModel is the model a log names: the samples' one, or "mixed" when
// they were answered by several (each sample names its own).
func logModel(samples []inspectlog.Sample) string {
	model := ""
	for _, s := range samples {
		m := fmt.Sprint(s.Metadata["provider"], "/", s.Metadata["model"])
		if model != "" && m != model {
			return "mecha/mixed"
		}
		model = m
	}
	if model == "" {
		return "mecha/none"
	}
	return model
}
