package regresscmd

import (
	"fmt"

	"github.com/mecha-agent/mecha/internal/textfmt"
)

// A chart is horizontal bars, one per model, each of one or more
// segments, laid out here so that the page draws it as inline SVG with
// no script.
type chart struct {
	Title         string
	Width, Height int
	Left          int // where the bars start, after the labels
	Bars          []chartBar
	Legend        []legendKey
}

type chartBar struct {
	Label, Value   string
	LabelX, ValueX float64
	TextY          float64
	Segs           []chartSeg
}

type chartSeg struct {
	Class    string
	X, Y     float64
	W, H     float64
	Title    string
	value    float64
	valueFmt string
}

type legendKey struct{ Class, Name string }

// Chart geometry, in pixels.
const (
	chartLeft  = 200 // labels to the left of this
	chartSpan  = 420 // the longest bar
	chartWidth = chartLeft + chartSpan + 110
	rowHeight  = 26
	barHeight  = 16
)

// bar is one model's row before layout: its segments' values.
type bar struct {
	label string
	segs  []chartSeg
	value string
}

// layout places the bars, scaled so that the longest total (or max,
// when larger) spans the chart.
func layout(title string, max float64, bars []bar, legend []legendKey) chart {
	for _, b := range bars {
		total := 0.0
		for _, s := range b.segs {
			total += s.value
		}
		if total > max {
			max = total
		}
	}
	c := chart{Title: title, Width: chartWidth, Height: len(bars)*rowHeight + 4, Left: chartLeft, Legend: legend}
	for i, b := range bars {
		y := float64(i*rowHeight) + 4
		cb := chartBar{Label: textfmt.Clip(b.label, 30), Value: b.value, LabelX: chartLeft - 8, TextY: y + barHeight - 3}
		x := float64(chartLeft)
		for _, s := range b.segs {
			w := 0.0
			if max > 0 {
				w = s.value / max * chartSpan
			}
			s.X, s.Y, s.W, s.H = round1(x), y, round1(w), barHeight
			if s.Title == "" {
				s.Title = fmt.Sprintf(s.valueFmt, s.value)
			}
			cb.Segs = append(cb.Segs, s)
			x += w
		}
		cb.ValueX = round1(x + 6)
		c.Bars = append(c.Bars, cb)
	}
	return c
}

func round1(f float64) float64 { return float64(int(f*10+0.5)) / 10 }

// charts are the page's charts of the suites: the rates, the divergences
// by kind, tokens, cost (when every model is priced) and wall time.
func charts(sums []regressSummary) []chart {
	k := sums[0].Repeat
	var at1, hat, divs, toks, costs, times []bar
	priced := true
	for _, s := range sums {
		name := modelName(s)
		at1 = append(at1, bar{name, []chartSeg{{Class: "s-rate", value: s.PassAt1, valueFmt: "pass@1 %.2f"}}, rate(s.PassAt1)})
		hat = append(hat, bar{name, []chartSeg{{Class: "s-hat", value: s.PassHatK, valueFmt: fmt.Sprintf("pass^%d %%.2f", k)}}, rate(s.PassHatK)})
		var segs []chartSeg
		total := 0
		for _, kind := range kinds {
			n := s.Divergences[kind]
			total += n
			if n > 0 {
				segs = append(segs, chartSeg{Class: "s-" + kind, value: float64(n), Title: fmt.Sprintf("%s: %d", kind, n)})
			}
		}
		divs = append(divs, bar{name, segs, fmt.Sprint(total)})
		in := s.Tokens.Input + s.Tokens.CacheRead + s.Tokens.CacheWrite
		toks = append(toks, bar{name, []chartSeg{
			{Class: "s-input", value: float64(in), Title: "input: " + textfmt.Count(in)},
			{Class: "s-output", value: float64(s.Tokens.Output), Title: "output: " + textfmt.Count(s.Tokens.Output)},
		}, tokenCounts(s.Tokens)})
		if s.CostUSD == nil {
			priced = false
		} else {
			costs = append(costs, bar{name, []chartSeg{{Class: "s-cost", value: *s.CostUSD, valueFmt: "$%.4f"}}, cost(s.CostUSD)})
		}
		times = append(times, bar{name, []chartSeg{{Class: "s-time", value: s.Seconds, valueFmt: "%.2f s"}}, seconds(s.Seconds)})
	}
	out := []chart{layout("clean rate (pass@1)", 1, at1, nil)}
	if k > 1 {
		out = append(out, layout(fmt.Sprintf("pass^%d: pins clean in all %d runs", k, k), 1, hat, nil))
	}
	out = append(out, layout("divergences by kind", 0, divs, []legendKey{
		{"s-tool", "tool"}, {"s-arguments", "arguments"}, {"s-extra", "extra"}, {"s-missing", "missing"}}))
	out = append(out, layout("tokens", 0, toks, []legendKey{{"s-input", "input"}, {"s-output", "output"}}))
	if priced {
		out = append(out, layout("cost at today's prices", 0, costs, nil))
	}
	return append(out, layout("wall time", 0, times, nil))
}
