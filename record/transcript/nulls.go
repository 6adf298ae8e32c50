package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

var nullLiteral = []byte("null")

// nullableSettings are the config fields whose Go type has no null, in the
// order a config record writes them.
var nullableSettings = []string{"mecha_version", "provider", "model", "workspace", "tools", "thinking", "cache_prompt",
	"max_tokens", "max_turns", "compact_keep_recent", "permission_mode", "trifecta", "sandbox", "sandbox_network"}

// configNulls returns the fields of nullableSettings a config line holds
// as null, in that order.
func configNulls(line []byte) []string {
	var fields map[string]json.RawMessage
	if json.Unmarshal(line, &fields) != nil {
		return nil
	}
	var nulls []string
	for _, k := range nullableSettings {
		if v, ok := fields[k]; ok && bytes.Equal(bytes.TrimSpace(v), nullLiteral) {
			nulls = append(nulls, k)
		}
	}
	return nulls
}

// appendConfigNulls encodes a config record whose Nulls name settings to
// write as null: the record as AppendEncode writes it, then those fields'
// values replaced by null, the order of the fields kept.
func appendConfigNulls(buf *bytes.Buffer, c *Config) error {
	plain := *c
	plain.Nulls = nil
	line, err := Encode(&plain)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("transcript: encode config: not an object")
	}
	start := buf.Len()
	buf.WriteByte('{')
	for i := 0; dec.More(); i++ {
		t, err := dec.Token()
		if err != nil {
			buf.Truncate(start)
			return fmt.Errorf("transcript: encode config: %w", err)
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			buf.Truncate(start)
			return fmt.Errorf("transcript: encode config: %w", err)
		}
		if slices.Contains(c.Nulls, key) && slices.Contains(nullableSettings, key) {
			v = nullLiteral
		}
		if i > 0 {
			buf.WriteByte(',')
		}
		k, _ := marshal(key)
		buf.Write(bytes.TrimSuffix(k, []byte("\n")))
		buf.WriteByte(':')
		buf.Write(v)
	}
	buf.WriteString("}\n")
	return nil
}
