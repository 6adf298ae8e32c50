package replay

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"slices"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"github.com/mecha-agent/mecha/record/sessionview"
	"github.com/mecha-agent/mecha/record/transcript"
)

// Fields of the request a RequestChange names, in the order a report
// lists them: what the model is told, then who answers, then how.
const (
	FieldSystemPrompt = "system_prompt"
	FieldTools        = "tools"     // the names of the tools offered
	FieldToolSpec     = "tool_spec" // one tool's description and input schema
	FieldModel        = "model"
	FieldProvider     = "provider"
)

// settingFields are the config's other settings that shape a request,
// compared value by value: sampling, thinking, then limits.
var settingFields = []string{
	"temperature", "seed", "effort", "thinking", "cache_prompt",
	"max_tokens", "max_turns", "max_output_tokens", "max_cost_usd", "compact_at_tokens", "compact_keep_recent",
}

// RequestChange is one part of the request that differs between a
// recorded attach and its replay: the model, a setting, the system
// prompt, the tools offered, one tool's spec.
type RequestChange struct {
	// Attach is the recorded attach, from 1 (as Attach numbers them).
	Attach int    `json:"attach"`
	Field  string `json:"field"`
	// Tool names the tool of a tool_spec change, and Changed its parts
	// (description, input_schema).
	Tool    string   `json:"tool,omitempty"`
	Changed []string `json:"changed,omitempty"`
	// Recorded and Now are the two values: for the system prompt its
	// fingerprint (the texts are in the diff), for the tools offered
	// their names, for a spec its description and input schema.
	Recorded any `json:"recorded"`
	Now      any `json:"now"`
	// Added and Removed are the tools offered now and not then, and then
	// and not now.
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	// Diff is a unified diff of the two system prompts, or of the two
	// specs (description, then the schema indented).
	Diff string `json:"diff,omitempty"`
}

// Name is how a divergence's After refers to the change: its field, and
// for a spec the tool ("tool_spec:fs_read").
func (c RequestChange) Name() string {
	if c.Field == FieldToolSpec {
		return c.Field + ":" + c.Tool
	}
	return c.Field
}

// Fingerprint is a hash of each part of the request a config shapes:
// system_prompt, tools, model, provider, sampling, limits, and each
// tool's spec as "tool_spec:NAME". Two configs whose fingerprints agree
// on a part send the same part; only the parts whose hashes differ are
// compared in detail.
type Fingerprint map[string]string

// RequestFingerprint is the fingerprint of one attach's request, as
// recorded and as the replay sent it.
type RequestFingerprint struct {
	Attach   int         `json:"attach"`
	Recorded Fingerprint `json:"recorded"`
	Now      Fingerprint `json:"now"`
}

// FingerprintOf hashes the parts of the request c shapes. The tools and
// their specs are left out when c predates recorded specs.
func FingerprintOf(c *transcript.Config) Fingerprint {
	fields := sessionview.ConfigFields(c)
	pick := func(names ...string) map[string]any {
		m := map[string]any{}
		for _, n := range names {
			m[n] = fields[n]
		}
		return m
	}
	f := Fingerprint{
		FieldSystemPrompt: hash(c.SystemPrompt),
		FieldModel:        hash(c.Model),
		FieldProvider:     hash(c.Provider),
		"sampling":        hash(pick(settingFields[:5]...)),
		"limits":          hash(pick(settingFields[5:]...)),
	}
	if c.ToolSpecs != nil {
		f[FieldTools] = hash(specNames(c.ToolSpecs))
		for _, s := range c.ToolSpecs {
			f[FieldToolSpec+":"+s.Name] = hash(transcript.ToolSpec{Name: s.Name, Description: s.Description, InputSchema: canonical(s.InputSchema)})
		}
	}
	return f
}

// hash is the first 16 hex digits of the SHA-256 of v as JSON (maps
// with sorted keys).
func hash(v any) string {
	b, _ := json.Marshal(v)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// canonical is a JSON text re-encoded with sorted keys and no spacing,
// so that key order and layout do not change a fingerprint.
func canonical(raw json.RawMessage) json.RawMessage {
	v, err := decodeJSON(schema(raw))
	if err != nil {
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return b
}

func specNames(specs []transcript.ToolSpec) []string {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	return names
}

// requestChanges compares the request an attach recorded (rec) with the
// one its replay sends (now), part by part, in the order of the fields
// above. Tools and specs are compared only when both recorded them.
func requestChanges(attach int, rec, now *transcript.Config) ([]RequestChange, RequestFingerprint) {
	fr, fn := FingerprintOf(rec), FingerprintOf(now)
	fp := RequestFingerprint{Attach: attach, Recorded: fr, Now: fn}
	var out []RequestChange
	add := func(c RequestChange) {
		c.Attach = attach
		out = append(out, c)
	}
	if fr[FieldSystemPrompt] != fn[FieldSystemPrompt] {
		add(RequestChange{Field: FieldSystemPrompt, Recorded: fr[FieldSystemPrompt], Now: fn[FieldSystemPrompt],
			Diff: unified("recorded", "now", deref(rec.SystemPrompt), deref(now.SystemPrompt))})
	}
	if rec.ToolSpecs != nil && now.ToolSpecs != nil {
		if fr[FieldTools] != fn[FieldTools] {
			a, b := specNames(rec.ToolSpecs), specNames(now.ToolSpecs)
			add(RequestChange{Field: FieldTools, Recorded: a, Now: b, Added: missing(b, a), Removed: missing(a, b)})
		}
		for _, r := range rec.ToolSpecs {
			key := FieldToolSpec + ":" + r.Name
			if fn[key] == "" || fr[key] == fn[key] {
				continue
			}
			i := slices.IndexFunc(now.ToolSpecs, func(s transcript.ToolSpec) bool { return s.Name == r.Name })
			if c, ok := specChange(r, now.ToolSpecs[i]); ok {
				add(c)
			}
		}
	}
	if rec.Model != now.Model {
		add(RequestChange{Field: FieldModel, Recorded: rec.Model, Now: now.Model})
	}
	if rec.Provider != now.Provider {
		add(RequestChange{Field: FieldProvider, Recorded: rec.Provider, Now: now.Provider})
	}
	if fr["sampling"] != fn["sampling"] || fr["limits"] != fn["limits"] {
		a, b := sessionview.ConfigFields(rec), sessionview.ConfigFields(now)
		for _, name := range settingFields {
			if !reflect.DeepEqual(a[name], b[name]) {
				add(RequestChange{Field: name, Recorded: a[name], Now: b[name]})
			}
		}
	}
	return out, fp
}

// specChange compares one tool's recorded spec with today's: the
// description as text, the schema as a JSON value.
func specChange(rec, now transcript.ToolSpec) (RequestChange, bool) {
	var parts []string
	if rec.Description != now.Description {
		parts = append(parts, SpecDescription)
	}
	if !EqualJSON(schema(rec.InputSchema), schema(now.InputSchema)) {
		parts = append(parts, SpecInputSchema)
	}
	if len(parts) == 0 {
		return RequestChange{}, false
	}
	side := func(s transcript.ToolSpec) map[string]any {
		return map[string]any{"description": s.Description, "input_schema": schema(s.InputSchema)}
	}
	text := func(s transcript.ToolSpec) string {
		return s.Description + "\n\n" + indented(schema(s.InputSchema))
	}
	return RequestChange{Field: FieldToolSpec, Tool: rec.Name, Changed: parts, Recorded: side(rec), Now: side(now),
		Diff: unified("recorded", "now", text(rec), text(now))}, true
}

// unified is a unified diff of two texts, each ending in a newline (a
// prompt is not a file, and its last line should not be marked as
// lacking one).
func unified(from, to, a, b string) string {
	nl := func(s string) string {
		if !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
		return s
	}
	return udiff.Unified(from, to, nl(a), nl(b))
}

// indented is a JSON text indented, or as it is when it is not JSON.
func indented(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// missing lists the names of a not in b.
func missing(a, b []string) []string {
	var out []string
	for _, n := range a {
		if !slices.Contains(b, n) {
			out = append(out, n)
		}
	}
	return out
}

// explain lists, for a divergence, the changes of its attach that may
// explain it: those naming one of its tools first (the tool's spec, the
// tool added to or removed from those offered), then the rest in order.
func explain(d Divergence, changes []RequestChange, attach int) []string {
	var tools []string
	for _, c := range []*CallRef{d.Expected, d.Actual} {
		if c != nil {
			tools = append(tools, c.Name)
		}
	}
	names := func(c RequestChange) bool {
		switch c.Field {
		case FieldToolSpec:
			return slices.Contains(tools, c.Tool)
		case FieldTools:
			return slices.ContainsFunc(tools, func(t string) bool { return slices.Contains(c.Added, t) || slices.Contains(c.Removed, t) })
		}
		return false
	}
	var first, rest []string
	for _, c := range changes {
		if c.Attach != attach {
			continue
		}
		if names(c) {
			first = append(first, c.Name())
		} else {
			rest = append(rest, c.Name())
		}
	}
	return append(first, rest...)
}
