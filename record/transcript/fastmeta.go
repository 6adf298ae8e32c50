package transcript

import "time"

// DecodeMeta decodes a header line. Listing reads one header per session,
// so this has a fast path for the flat object mecha writes (string, integer
// and time fields only), which gives exactly what encoding/json would; any
// other shape goes through Decode.
func DecodeMeta(line []byte) (*Meta, error) {
	if m, ok := fastMeta(line); ok {
		return m, nil
	}
	r, err := Decode(line)
	if err != nil {
		return nil, err
	}
	m, ok := r.(*Meta)
	if !ok {
		return nil, ErrNotObject
	}
	return m, nil
}

// fastMeta parses {"key":value,...} where every key is a known meta field
// and every value a string, a small non-negative integer (format) or an RFC
// 3339 string (created_at, at). ok is false for anything else.
func fastMeta(b []byte) (m *Meta, ok bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	m = new(Meta)
	var seen uint16 // one bit per known key, to refuse duplicates
	i++
	for first := true; ; first = false {
		i = skipSpace(b, i)
		if i < len(b) && b[i] == '}' && first {
			return nil, false // an empty object is no header
		}
		kEnd, ok := scanString(b, i)
		if !ok {
			return nil, false
		}
		key, ok := unquote(b[i:kEnd])
		bit := metaKeys[key]
		if !ok || bit == 0 || seen&bit != 0 {
			return nil, false // unknown or repeated keys: let encoding/json decide
		}
		seen |= bit
		i = skipSpace(b, kEnd)
		if i >= len(b) || b[i] != ':' {
			return nil, false
		}
		i = skipSpace(b, i+1)
		if key == "format" {
			n, end := 0, i
			for end < len(b) && b[end] >= '0' && b[end] <= '9' && end-i < 9 {
				n = n*10 + int(b[end]-'0')
				end++
			}
			if end == i || (b[i] == '0' && end-i > 1) || (end < len(b) && (b[end] == '.' || b[end] == 'e' || b[end] == 'E' || (b[end] >= '0' && b[end] <= '9'))) {
				return nil, false
			}
			m.Format, i = n, end
		} else {
			vEnd, ok := scanString(b, i)
			if !ok {
				return nil, false
			}
			raw := b[i:vEnd]
			switch key {
			case "created_at", "at":
				var t time.Time
				if t.UnmarshalJSON(raw) != nil {
					return nil, false
				}
				if key == "at" {
					m.At = t
				} else {
					m.CreatedAt = t
				}
			default:
				s, ok := unquote(raw)
				if !ok {
					return nil, false
				}
				switch key {
				case "record":
					if s != KindMeta {
						return nil, false
					}
				case "id":
					m.ID = s
				case "provider":
					m.Provider = s
				case "model":
					m.Model = s
				case "workspace":
					m.Workspace = s
				case "title":
					m.Title = s
				case "replay_of":
					m.ReplayOf = s
				case "rerun_of":
					m.RerunOf = s
				case "reflects_on":
					m.ReflectsOn = s
				default:
					return nil, false
				}
			}
			i = vEnd
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return nil, false
		}
		if b[i] == '}' {
			if skipSpace(b, i+1) != len(b) || seen&metaKeys["record"] == 0 || m.ID == "" {
				return nil, false
			}
			return m, true
		}
		if b[i] != ',' {
			return nil, false
		}
		i++
	}
}

var metaKeys = map[string]uint16{"record": 1, "format": 2, "id": 4, "created_at": 8, "provider": 16,
	"model": 32, "workspace": 64, "title": 128, "replay_of": 256, "at": 512, "rerun_of": 1024,
	"reflects_on": 2048}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanString returns the index just past the string literal starting at
// b[i]; unquote validates what is inside.
func scanString(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return 0, false
}
