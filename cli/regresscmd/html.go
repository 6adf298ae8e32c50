package regresscmd

import (
	"bufio"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"sync"

	"github.com/mecha-agent/mecha/internal/atomicfile"
	viewhtml "github.com/mecha-agent/mecha/record/sessionview/html"
)

// The page is the session page's frame (its policy: nothing fetched, no
// script but the frame's own) around a comparison table, charts drawn
// as inline SVG (no script needed), and each pin's status on each model.
var pageTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("regress").Parse(pageText))
})

const pageText = `
<style>
table.cmp{border-collapse:collapse;font-size:13px;margin:.4em 0 1.2em}
table.cmp th,table.cmp td{border:1px solid var(--line);padding:2px 8px;text-align:left;vertical-align:top}
table.cmp td.n{text-align:right;font-variant-numeric:tabular-nums}
svg.chart{display:block;margin:.2em 0 1em;font:12px system-ui,sans-serif}
svg.chart text{fill:var(--fg)}svg.chart .axis{stroke:var(--line)}
.s-rate{fill:#2f6fd6}.s-hat{fill:#8250df}.s-cost{fill:#1a7f37}.s-time{fill:#656d76}
.s-tool{fill:#d1242f;background:#d1242f}.s-arguments{fill:#d4a72c;background:#d4a72c}.s-extra{fill:#e08a00;background:#e08a00}.s-missing{fill:#bf3989;background:#bf3989}
.s-input{fill:#2f6fd6;background:#2f6fd6}.s-output{fill:#54aeff;background:#54aeff}
td.st-clean{background:#dafbe1;color:#1f2328}td.st-flaky{background:#fff8c5;color:#1f2328}
td.st-diverged{background:#ffebe9;color:#1f2328}td.st-refused,td.st-failed{background:#f6e3f0;color:#1f2328}
.legend span{display:inline-block;width:12px;height:12px;vertical-align:middle;margin:0 4px 0 10px}
</style>
<h1>{{.Title}}</h1>
<table class="cmp" id="comparison"><tr><th>model</th><th>clean pins</th><th>pass@1</th>{{if .Repeated}}<th>pass@{{.K}}</th><th>pass^{{.K}}</th>{{end}}<th>divergences</th><th>tokens in / out</th><th>cost</th><th>wall time</th></tr>
{{range .Rows}}<tr><td>{{.Model}}</td><td class="n">{{.Clean}}</td><td class="n">{{.PassAt1}}</td>{{if $.Repeated}}<td class="n">{{.PassAtK}}</td><td class="n">{{.PassHatK}}</td>{{end}}<td>{{.Divergences}}</td><td class="n">{{.Tokens}}</td><td class="n">{{.Cost}}</td><td class="n">{{.Time}}</td></tr>
{{end}}</table>
{{range .Charts}}<h2>{{.Title}}</h2>
{{if .Legend}}<div class="legend">{{range .Legend}}<span class="{{.Class}}"></span>{{.Name}}{{end}}</div>{{end}}
<svg class="chart" role="img" aria-label="{{.Title}}" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" xmlns="http://www.w3.org/2000/svg">
<line class="axis" x1="{{.Left}}" y1="0" x2="{{.Left}}" y2="{{.Height}}"></line>
{{range .Bars}}<g class="bar" data-model="{{.Label}}"><text x="{{.LabelX}}" y="{{.TextY}}" text-anchor="end">{{.Label}}</text>
{{range .Segs}}<rect class="{{.Class}}" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}"><title>{{.Title}}</title></rect>
{{end}}<text class="value" x="{{.ValueX}}" y="{{.TextY}}">{{.Value}}</text></g>
{{end}}</svg>
{{end}}
<h2>each pin on each model</h2>
<table class="cmp" id="pins"><tr><th>session</th><th>title</th>{{range .Rows}}<th>{{.Model}}</th>{{end}}</tr>
{{range .Pins}}<tr><td>{{.ID}}</td><td>{{.Title}}</td>{{range .Cells}}<td class="st-{{.Status}}">{{.Text}}</td>{{end}}</tr>
{{end}}</table>
`

// writeHTMLFile replaces the file at path (mode 0600) with the page.
func writeHTMLFile(path string, sums []regressSummary) error {
	err := atomicfile.Write(path, 0o600, func(w io.Writer) error { return writeHTML(w, sums) })
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("regress: --html: cannot write %s: %v", path, pe.Err)
	}
	return err
}

// writeHTML writes the suites as one self-contained page.
func writeHTML(w io.Writer, sums []regressSummary) error {
	bw := bufio.NewWriter(w)
	v := pageView(sums)
	if err := viewhtml.Head(bw, v.Title); err != nil {
		return err
	}
	if err := pageTmpl().Execute(bw, v); err != nil {
		return err
	}
	if err := viewhtml.Foot(bw); err != nil {
		return err
	}
	return bw.Flush()
}

type page struct {
	Title    string
	K        int
	Repeated bool
	Rows     []pageRow
	Charts   []chart
	Pins     []pinRow
}

type pageRow struct {
	Model, Clean, PassAt1, PassAtK, PassHatK, Divergences, Tokens, Cost, Time string
}

type pinRow struct {
	ID, Title string
	Cells     []pinCellView
}

type pinCellView struct{ Status, Text string }

func pageView(sums []regressSummary) page {
	k := sums[0].Repeat
	v := page{K: k, Repeated: k > 1}
	pins := len(sums[0].Results)
	v.Title = fmt.Sprintf("mecha regress: %d %s", pins, plural(pins, "pin", "pins"))
	if len(sums) > 1 {
		v.Title += fmt.Sprintf(" on %d models", len(sums))
	}
	if k > 1 {
		v.Title += fmt.Sprintf(", %d runs each", k)
	}
	for _, s := range sums {
		v.Rows = append(v.Rows, pageRow{Model: modelName(s), Clean: fmt.Sprintf("%d/%d", s.Clean, s.Pins),
			PassAt1: rate(s.PassAt1), PassAtK: rate(s.PassAtK), PassHatK: rate(s.PassHatK),
			Divergences: divergenceCounts(s.Divergences), Tokens: tokenCounts(s.Tokens), Cost: cost(s.CostUSD), Time: seconds(s.Seconds)})
	}
	v.Charts = charts(sums)
	for i, r := range sums[0].Results {
		row := pinRow{ID: r.ID, Title: r.Title}
		for _, s := range sums {
			p := s.Results[i]
			row.Cells = append(row.Cells, pinCellView{Status: p.Status, Text: pinCell(p, k)})
		}
		v.Pins = append(v.Pins, row)
	}
	return v
}

func rate(f float64) string { return fmt.Sprintf("%.2f", f) }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
