package replay

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/record/transcript"
)

// Parts of a tool spec a SpecChange names.
const (
	SpecDescription = "description"
	SpecInputSchema = "input_schema"
)

// SpecChange is a tool whose spec differs from the one the recording
// offered. The replay offers today's spec, so the change is part of what
// it measures; it is a note, not a divergence.
type SpecChange struct {
	Tool string `json:"tool"`
	// Changed names the parts that differ: description, input_schema.
	Changed []string `json:"changed"`
}

// specChanges gathers the changes of every attach, one entry per tool.
type specChanges struct {
	list []SpecChange // nil until some attach recorded specs
}

// compare notes how today's registry differs from the specs one attach
// recorded. Schemas are compared as JSON values, so key order and spacing
// do not count. A recorded tool that is gone is not a change: the tool
// list refuses the replay before this matters.
func (c *specChanges) compare(recorded []transcript.ToolSpec, live *tool.Registry) {
	if recorded == nil {
		return
	}
	if c.list == nil {
		c.list = []SpecChange{}
	}
	for _, rec := range recorded {
		t, ok := live.Get(rec.Name)
		if !ok {
			continue
		}
		now := t.Spec()
		var parts []string
		if now.Description != rec.Description {
			parts = append(parts, SpecDescription)
		}
		if !EqualJSON(schema(now.InputSchema), schema(rec.InputSchema)) {
			parts = append(parts, SpecInputSchema)
		}
		if len(parts) > 0 {
			c.add(rec.Name, parts)
		}
	}
}

func (c *specChanges) add(name string, parts []string) {
	for i := range c.list {
		if c.list[i].Tool != name {
			continue
		}
		for _, p := range parts {
			if !slices.Contains(c.list[i].Changed, p) {
				c.list[i].Changed = append(c.list[i].Changed, p)
			}
		}
		slices.Sort(c.list[i].Changed) // description, input_schema
		return
	}
	c.list = append(c.list, SpecChange{Tool: name, Changed: parts})
}

// schema reads a missing schema and a null one alike.
func schema(raw json.RawMessage) json.RawMessage {
	if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return json.RawMessage("{}")
	}
	return raw
}
