package replaycmd

import (
	"bufio"
	"errors"
	"io/fs"

	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"
	"sync"

	"github.com/aymanbagabas/go-udiff"
	"github.com/mecha-agent/mecha/internal/atomicfile"

	"github.com/mecha-agent/mecha/internal/textfmt"
	viewhtml "github.com/mecha-agent/mecha/record/sessionview/html"
	"github.com/mecha-agent/mecha/redrive/replay"
)

// htmlTmpl is the replay report's page body; the frame (policy, styles,
// script) is the session page's. It is parsed on first use, not when any
// mecha command starts.
var htmlTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{"inc": func(i int) int { return i + 1 }}).Parse(reportText))
})

const reportText = `
<style>
table.side{border-collapse:collapse;width:100%;font-size:12.5px;margin:.4em 0 1em}
table.side th,table.side td{border:1px solid var(--line);padding:2px 6px;text-align:left;vertical-align:top;word-break:break-all}
table.side td.call{font-family:ui-monospace,monospace;width:42%}
tr.div>td{background:#ffebe9;color:#1f2328}tr.div-arguments>td{background:#fff8c5;color:#1f2328}
.kind{font-weight:bold;color:var(--both)}
table.changes{border-collapse:collapse;width:100%;font-size:12.5px;margin:.4em 0 1em}
table.changes th,table.changes td{border:1px solid var(--line);padding:2px 6px;text-align:left;vertical-align:top;word-break:break-word}
table.changes tr:target>td{outline:2px solid var(--both)}
.after{margin-top:.2em}
pre.diff .del{color:#cf222e}pre.diff .add{color:#1a7f37}
</style>
{{range $i, $r := .}}<section class="report">
<h1>replay of {{.Session}}{{if gt (len $) 1}} · repeat {{inc $i}}{{end}}</h1>
{{if .Changes}}<h2>changed since the recording</h2>
<table class="changes"><tr><th>attach</th><th>what</th><th>recorded</th><th>now</th></tr>
{{range .Changes}}<tr id="{{.ID}}"><td>{{.Attach}}</td><td>{{.What}}</td>{{if .Diff}}<td colspan="2"><pre class="diff">{{range .Diff}}<span class="{{.Class}}">{{.Text}}</span>
{{end}}</pre></td>{{else}}<td>{{.Recorded}}</td><td>{{.Now}}</td>{{end}}</tr>
{{end}}</table>{{end}}
<table class="meta">
<tr><th>status</th><td class="status-{{.Status}}">{{.Status}}{{if .Reason}}: {{.Reason}}{{end}}</td></tr>
<tr><th>replayed on</th><td>{{.Provider}}/{{.Model}}{{range .Attaches}} · attach {{.Attach}} (turns {{.FirstTurn}}–{{.LastTurn}}): {{.Provider}}/{{.Model}}, recorded on {{.RecordedProvider}}/{{.RecordedModel}}{{end}}</td></tr>
<tr><th>mode</th><td>--on-divergence={{.Mode}}</td></tr>
<tr><th>calls</th><td>{{.CallsReplayed}} of {{.CallsExpected}} recorded calls answered from the recording{{if .CallsRun}}, {{.CallsRun}} run for real{{end}}</td></tr>
<tr><th>divergences</th><td>{{len .Divergences}}</td></tr>
<tr><th>usage</th><td>{{.Usage.InputTokens}} input · {{.Usage.OutputTokens}} output tokens over {{.Turns}} turns</td></tr>
{{if .Replay}}<tr><th>recorded as</th><td>{{.Replay}}</td></tr>{{end}}
{{if .Steered}}<tr><th>note</th><td>the recording was steered mid-run; steering cannot be re-injected, so the comparison is approximate</td></tr>{{end}}
{{range .Notes}}<tr><th>note</th><td>{{.}}</td></tr>{{end}}
</table>
{{range .ByTurn}}<h2>turn {{.N}}</h2>
<table class="side"><tr><th>#</th><th>recorded</th><th>replayed</th><th>divergence</th></tr>
{{range .Rows}}<tr{{if .Kind}} class="div div-{{.Kind}}"{{end}}><td>{{.Pos}}</td><td class="call">{{with .Recorded}}<b>{{.Name}}</b> {{.Args}}{{else}}—{{end}}</td><td class="call">{{with .Replayed}}<b>{{.Name}}</b> {{.Args}}{{if .Live}} <span class="badge b-unknown">run for real</span>{{end}}{{else}}—{{end}}</td>
<td>{{if .Kind}}<span class="kind">{{.Kind}}</span>{{if .Structural}} (structural){{else}} (not structural){{end}}{{range .Summary}}<div>{{.}}</div>{{end}}{{if .Diff}}<details open><summary>arguments diff</summary><pre class="diff">{{range .Diff}}<span class="{{.Class}}">{{.Text}}</span>
{{end}}</pre></details>{{end}}{{if .After}}<div class="after">after the changes to: {{range $k, $a := .After}}{{if $k}}, {{end}}<a href="#{{$a.ID}}">{{$a.Text}}</a>{{end}}</div>{{end}}{{else if not .Replayed}}<span class="dim">not reached: the replay stopped before it</span>{{end}}</td></tr>
{{end}}</table>
{{end}}</section>
{{end}}`

type htmlStep struct {
	Name, Args string
	Live       bool
}

type diffLine struct{ Class, Text string }

type htmlRow struct {
	Pos                int
	Recorded, Replayed *htmlStep
	Kind               string
	Structural         bool
	Summary            []string
	Diff               []diffLine
	After              []htmlLink
}

// htmlLink links a divergence to a request change before it.
type htmlLink struct{ ID, Text string }

// htmlChange is a row of the request changes: a diff, or two values.
type htmlChange struct {
	ID            string
	Attach        int
	What          string
	Recorded, Now string
	Diff          []diffLine
}

type htmlTurn struct {
	N    int
	Rows []htmlRow
}

type htmlReport struct {
	*replay.Report
	Changes []htmlChange
	ByTurn  []htmlTurn
}

// writeHTMLFile replaces the file at path (mode 0600) with the reports'
// page.
func writeHTMLFile(path string, reports []*replay.Report) error {
	err := atomicfile.Write(path, 0o600, func(w io.Writer) error { return WriteHTML(w, reports) })
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("--html: cannot write %s: %v", path, pe.Err)
	}
	return err
}

// WriteHTML writes replay reports as one self-contained page: for each,
// its outcome, then turn by turn the recorded and the replayed calls side
// by side, position by position as the replay compared them, each
// divergence marked with its kind and an argument difference as a diff.
func WriteHTML(w io.Writer, reports []*replay.Report) error {
	bw := bufio.NewWriter(w)
	title := "mecha replay"
	if len(reports) > 0 {
		title = "mecha replay of " + reports[0].Session
	}
	if err := viewhtml.Head(bw, title); err != nil {
		return err
	}
	views := make([]htmlReport, len(reports))
	for i, r := range reports {
		views[i] = htmlView(r, fmt.Sprintf("r%d-", i+1))
	}
	if err := htmlTmpl().Execute(bw, views); err != nil {
		return err
	}
	if err := viewhtml.Foot(bw); err != nil {
		return err
	}
	return bw.Flush()
}

// htmlView lines the two sequences up: turn by turn, the k-th recorded
// call of a turn beside the k-th call the replay made in it.
//
// Anchors are prefixed with prefix, one per report on the page.
func htmlView(r *replay.Report, prefix string) htmlReport {
	v := htmlReport{Report: r}
	ids := map[string]string{} // change name and attach -> anchor
	for i, c := range r.RequestChanges {
		hc := htmlChange{ID: fmt.Sprintf("%schange-%d", prefix, i+1), Attach: c.Attach, What: ChangePhrase(c.Name()),
			Recorded: value(c.Recorded), Now: value(c.Now)}
		switch c.Field {
		case replay.FieldToolSpec:
			hc.What += ": " + strings.ReplaceAll(strings.Join(c.Changed, " and "), "_", " ") + " changed"
		case replay.FieldTools:
			var parts []string
			if len(c.Added) > 0 {
				parts = append(parts, "added "+strings.Join(c.Added, ", "))
			}
			if len(c.Removed) > 0 {
				parts = append(parts, "removed "+strings.Join(c.Removed, ", "))
			}
			if len(parts) > 0 {
				hc.What += ": " + strings.Join(parts, "; ")
			}
		}
		if c.Diff != "" {
			hc.Diff = diffLines(c.Diff)
		}
		ids[fmt.Sprint(c.Attach, c.Name())] = hc.ID
		v.Changes = append(v.Changes, hc)
	}
	rec, rep := byTurn(r.Recorded), byTurn(r.Replayed)
	turns := max(len(rec), len(rep))
	base := 0 // the session position of the turn's first recorded call
	for t := 1; t < turns; t++ {
		ht := htmlTurn{N: t}
		for k := 0; k < max(len(rec[t]), len(rep[t])); k++ {
			row := htmlRow{Pos: base + k}
			if k < len(rec[t]) {
				row.Recorded = step(rec[t][k])
			}
			if k < len(rep[t]) {
				row.Replayed = step(rep[t][k])
			}
			markDivergence(&row, r.Divergences, t, ids)
			ht.Rows = append(ht.Rows, row)
		}
		base += len(rec[t])
		if len(ht.Rows) > 0 {
			v.ByTurn = append(v.ByTurn, ht)
		}
	}
	return v
}

// byTurn groups steps by turn: index t holds turn t's (index 0 unused).
func byTurn(steps []replay.Step) [][]replay.Step {
	var out [][]replay.Step
	for _, s := range steps {
		for len(out) <= s.Turn {
			out = append(out, nil)
		}
		out[s.Turn] = append(out[s.Turn], s)
	}
	return out
}

func step(s replay.Step) *htmlStep {
	return &htmlStep{Name: s.Name, Args: textfmt.JSON(s.Input, 300), Live: s.Live}
}

// markDivergence marks the row with the divergence of its turn and
// position, if any.
func markDivergence(row *htmlRow, divs []replay.Divergence, turn int, ids map[string]string) {
	for _, d := range divs {
		if d.Turn != turn || d.Index != row.Pos {
			continue
		}
		row.Kind, row.Structural = d.Kind, d.Structural
		for _, a := range d.After {
			row.After = append(row.After, htmlLink{ID: ids[fmt.Sprint(d.Attach, a)], Text: ChangePhrase(a)})
		}
		if d.Kind == replay.KindArguments && d.Expected != nil && d.Actual != nil {
			row.Summary = replay.ArgDiff(d.Expected.Input, d.Actual.Input)
			row.Diff = argDiff(d.Expected.Input, d.Actual.Input)
		}
		return
	}
}

// argDiff is a unified diff of two inputs, each indented as JSON.
func argDiff(expected, actual json.RawMessage) []diffLine {
	return diffLines(udiff.Unified("recorded", "replayed", indentJSON(expected), indentJSON(actual)))
}

// diffLines classes a unified diff's lines for colour.
func diffLines(d string) []diffLine {
	var out []diffLine
	for _, l := range strings.Split(strings.TrimSuffix(d, "\n"), "\n") {
		class := ""
		switch {
		case strings.HasPrefix(l, "---"), strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "@@"):
			class = "dim"
		case strings.HasPrefix(l, "-"):
			class = "del"
		case strings.HasPrefix(l, "+"):
			class = "add"
		}
		out = append(out, diffLine{class, l})
	}
	return out
}

// indentJSON is raw indented, ending in a newline (an input is not a
// file, and its last line should not be marked as lacking one).
func indentJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		b.Reset()
		b.Write(raw)
	}
	if !bytes.HasSuffix(b.Bytes(), []byte("\n")) {
		b.WriteByte('\n')
	}
	return b.String()
}
