package html

import (
	"html/template"
	"sync"
)

// tmpl holds the page's rows. Everything from a transcript goes through
// html/template's contextual escaping; the only other output is numbers
// and fixed class names. It is parsed on first use, not when any mecha
// command starts (about 0.7 ms and 2,500 allocations).
var tmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("rows").Parse(rowsText))
})

const rowsText = `
{{define "long"}}{{if .Empty}}<pre class="dim">(empty)</pre>{{else if .Markdown}}<div class="md">{{.Markdown}}</div>{{else}}<pre>{{.Shown}}</pre>{{if .Cut}}
{{if .Href}}<div class="more"><a class="full" href="{{.Href}}" target="_blank" rel="noopener">cut: {{len .Shown}} of {{.Size}} bytes shown · show all (a text file beside this page)</a></div>
{{else if .Omitted}}<div class="more dim">cut: {{len .Shown}} of {{.Size}} bytes shown · the rest is not in this page (it is at its budget); write the page to a file, with sessions view or export -o FILE, to have every text whole</div>
{{else}}<details class="more"><summary>cut: {{len .Shown}} of {{.Size}} bytes shown · show all</summary><pre>{{.Full}}</pre></details>{{end}}{{end}}{{end}}{{end}}

{{define "call"}}<details class="call o-{{.Outcome}}"><summary>{{if .Badge}}<span class="badge b-{{.Outcome}}">{{.Badge}}</span> {{end}}→ <b>{{.Name}}</b> <span class="args">{{.Args}}</span></summary>
<div class="dim">arguments</div>{{if .LongInput}}{{template "long" .LongInput}}{{else}}<pre>{{.Input}}</pre>{{end}}
{{if .Result}}<div class="dim">result{{if .Error}} (error){{end}}</div>{{template "long" .Result}}{{else}}<div class="dim">no result recorded (the run ended first)</div>{{end}}
</details>
{{end}}

{{define "header"}}<h1>{{.Title}}</h1>
<table class="meta">
<tr><th>session</th><td>{{.Meta.ID}}</td></tr>
<tr><th>title</th><td>{{.Meta.Title}}</td></tr>
<tr><th>created</th><td>{{.Created}}</td></tr>
<tr><th>model</th><td>{{.Meta.Provider}}/{{.Meta.Model}}</td></tr>
<tr><th>workspace</th><td>{{.Meta.Workspace}}</td></tr>
{{if .Meta.ReplayOf}}<tr><th>replays</th><td>{{.Meta.ReplayOf}}</td></tr>{{end}}
{{if .Meta.RerunOf}}<tr><th>reruns</th><td>{{.Meta.RerunOf}}</td></tr>{{end}}
{{with .Meta.MCPClient}}<tr><th>client</th><td>{{.Name}} {{.Version}}</td></tr>{{end}}
{{if .Imported}}<tr><th>imported</th><td>{{.Imported}}</td></tr>{{end}}{{if .Skipped}}<tr><th>skipped</th><td>{{.Skipped}}</td></tr>{{end}}
<tr><th>file</th><td>{{.Path}}</td></tr>
</table>
<p class="legend">taint band:<span style="background:var(--clean)"></span>clean<span style="background:var(--private)"></span>private<span style="background:var(--untrusted)"></span>untrusted<span style="background:var(--both)"></span>private and untrusted (▲ where it became armed)<span style="background:var(--unknown)"></span>unknown (no checkpoint yet)
 · <button type="button" data-open="1">expand all calls</button> <button type="button" data-open="0">collapse all</button> · <a href="#totals">totals</a></p>
<main>
{{end}}

{{define "attach"}}<div class="row s{{.Seg}} attach" id="line-{{.Line}}"><div class="band"></div><div class="body">{{with .Data}}
<div class="role">config · attach {{.N}}{{if .When}} <span class="when">{{.When}}</span>{{end}}{{if not .First}}: {{if .Changes}}changed {{range $i, $c := .Changes}}{{if $i}}, {{end}}{{$c}}{{end}}{{else}}unchanged{{end}}{{end}}</div>
{{if .Imported}}<div class="dim">imported from {{.Imported}}: only what that harness recorded is known</div>{{end}}
<details{{if or .First .Changes}} open{{end}}><summary class="dim">settings</summary>
<table class="config">{{range .Settings}}<tr{{if .Changed}} class="changed"{{end}}><th>{{.Name}}</th><td>{{if .Long}}{{if .Long.Empty}}—{{else}}<details><summary>show</summary>{{template "long" .Long}}</details>{{end}}{{else}}{{.Value}}{{end}}{{if .Changed}} <span class="was">(was {{.Was}})</span>{{end}}</td></tr>
{{end}}</table></details>{{end}}
</div></div>
{{end}}

{{define "user"}}<div class="row s{{.Seg}} user" id="line-{{.Line}}"><div class="band"></div><div class="body">{{with .Data}}
<div class="role">{{if .Steering}}user (steering, sent mid-run with tool results){{else}}user{{end}} <span class="when">{{.When}}</span></div>
{{template "long" .Text}}{{end}}
</div></div>
{{end}}

{{define "orphan"}}<div class="row s{{.Seg}} orphan" id="line-{{.Line}}"><div class="band"></div><div class="body">{{with .Data}}
<div class="role">tool result for an unknown call {{.ID}}{{if .Error}} (error){{end}}</div>
{{template "long" .Result}}{{end}}
</div></div>
{{end}}

{{define "reply"}}<div class="row s{{.Seg}} assistant" id="line-{{.Line}}"><div class="band"></div><div class="body">{{with .Data}}
<div class="role">assistant <span class="when">{{.When}}</span></div>
{{range .Parts}}{{if .Text}}{{template "long" .Text}}{{else if .Thinking}}<details class="more"><summary>thinking</summary>{{template "long" .Thinking}}</details>
{{else if .Call}}{{template "call" .Call}}{{else}}<div class="dim">[{{.Other}} block]</div>
{{end}}{{end}}{{end}}
</div></div>
{{end}}

{{define "aside"}}<div class="row s{{.Seg}} aside" id="line-{{.Line}}"><div class="band"></div><div class="body">{{with .Data}}
<div class="role">{{.Role}} <span class="dim">(a role this version of mecha does not write)</span> <span class="when">{{.When}}</span></div>
{{range .Parts}}{{if .Text}}{{template "long" .Text}}{{else}}<div class="dim">[{{.Other}} block]</div>{{end}}
{{end}}{{end}}
</div></div>
{{end}}

{{define "served"}}<div class="row s{{.Seg}} served" id="line-{{.Line}}"><div class="band"></div><div class="body">{{with .Data}}
<div class="role">mcp call {{.ID}} <span class="when">{{.When}}</span></div>
{{template "call" .Call}}{{end}}
</div></div>
{{end}}

{{define "checkpoint"}}<div class="row t-{{.Class}} checkpoint{{if .Armed}} armed{{end}}"{{if .Armed}} id="armed"{{else}} id="line-{{.Line}}"{{end}}><div class="band"></div><div class="body event">
taint checkpoint: {{.Taint}} · the {{.Messages}} messages above it since the last checkpoint are {{.Merged}}
{{if .Armed}}<div class="armed">armed: from here the conversation holds private data and untrusted content; the trifecta interlock refuses calls that could send data out</div>{{end}}
</div></div>
{{end}}

{{define "runend"}}<div class="row s{{.Seg}} runend" id="line-{{.Line}}"><div class="band"></div><div class="body event">{{with .Data}}
run finished: {{.Turns}} turns{{if .StopReason}}, {{.StopReason}}{{end}} · {{.Provider}}/{{.Model}} · {{.Usage.InputTokens}} in / {{.Usage.OutputTokens}} out / {{.Usage.CacheReadTokens}} cache read / {{.Usage.CacheWriteTokens}} cache write tokens · cost {{.Cost}}{{if .Error}} · <span class="armed">error: {{.Error}}</span>{{end}}{{end}}
</div></div>
{{end}}

{{define "compacted"}}<div class="row s{{.Seg}} compacted" id="line-{{.Line}}"><div class="band"></div><div class="body event">{{with .Data}}
compacted: the first {{.Replaces}} messages replaced by a summary ({{.Usage.InputTokens}} in / {{.Usage.OutputTokens}} out)
<details class="more"><summary>summary</summary>{{template "long" .Summary}}</details>{{end}}
</div></div>
{{end}}

{{define "other"}}<div class="row s{{.Seg}} other" id="line-{{.Line}}"><div class="band"></div><div class="body event">
a {{printf "%q" .Data}} record (not known to this version of mecha)
</div></div>
{{end}}

{{define "continued"}}</main>
<p class="parts">The session continues in the next part: <a href="{{.Next}}">next part →</a> (its totals are at the end of the last part)</p>
{{end}}

{{define "part"}}<h1>{{.Title}} · part {{.N}}</h1>
<p class="parts">session {{.ID}} · <a href="{{.Prev}}">← previous part</a> · <a href="{{.First}}">its beginning</a> · <button type="button" data-open="1">expand all calls</button> <button type="button" data-open="0">collapse all</button></p>
<main>
{{end}}

{{define "totals"}}</main>
<h2 id="totals">totals</h2>
<table class="meta totals">
<tr><th>taint</th><td>{{.Taint}}{{if .Armed}} · <a href="#armed">where it became armed</a>{{end}}</td></tr>
<tr><th>messages</th><td>{{.T.Messages}} ({{.T.Prompts}} prompts)</td></tr>
<tr><th>tool calls</th><td>{{.T.Calls}}{{if .T.Denied}} · {{.T.Denied}} denied{{end}}{{if .T.Refused}} · {{.T.Refused}} refused{{end}}{{if .T.Interlocked}} · {{.T.Interlocked}} refused by the trifecta interlock{{end}}{{if .T.Served}} · {{.T.Served}} MCP calls served{{end}}</td></tr>
<tr><th>usage</th><td>{{if .T.Saturated}}at least {{end}}{{.T.Usage.InputTokens}} input · {{.T.Usage.OutputTokens}} output · {{.T.Usage.CacheReadTokens}} cache read · {{.T.Usage.CacheWriteTokens}} cache write tokens over {{.T.Turns}} turns in {{.T.Runs}} runs</td></tr>
<tr><th>cost</th><td>{{.Cost}}</td></tr>
{{if .Skipped}}<tr><th>skipped</th><td>{{.Skipped}}</td></tr>{{end}}
</table>
{{end}}
`
