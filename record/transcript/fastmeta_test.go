package transcript

import (
	"bytes"
	"os"
	"reflect"
	"testing"
)

func TestFastMetaTakesCanonicalHeaders(t *testing.T) {
	t.Parallel()
	for _, name := range v1Fixtures(t) {
		data, _ := os.ReadFile(name)
		line, _, _ := bytes.Cut(data, []byte("\n"))
		m, err := DecodeMeta(line)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, _ := Decode(line)
		if !reflect.DeepEqual(m, want) {
			t.Errorf("%s: %+v, want %+v", name, m, want)
		}
	}
	line, _ := Encode(&Meta{Format: 1, ID: "x", Title: "é \"q\" \n <&>", ReplayOf: "y", RerunOf: "z", ReflectsOn: "r"})
	if _, ok := fastMeta(bytes.TrimSpace(line)); !ok {
		t.Errorf("fast path refused a header mecha writes: %s", line)
	}
	for _, line := range []string{`{"record":"meta"}`, `{"record":"message","id":"x"}`, `{"record":"meta","id":"x","format":1.5}`, `{}`,
		// Malformed: a key without its colon, a line that ends after a key.
		`{"record":"meta","id"x"abc"}`, `{"record":"meta","id" "abc"}`, `{"record":"meta","id"`, `{"record":"meta","id"  `} {
		if _, err := DecodeMeta([]byte(line)); err == nil {
			t.Errorf("DecodeMeta(%s) accepted", line)
		}
	}
}

// FuzzDecodeMeta checks the fast path against encoding/json: whenever it
// accepts a line, Decode must accept it too and agree on every field.
func FuzzDecodeMeta(f *testing.F) {
	f.Add([]byte(`{"record":"meta","format":1,"id":"20260805T091500-3f2a1b7c","created_at":"2026-08-05T09:15:00Z","provider":"p","model":"m","workspace":"/w","title":"t"}`))
	f.Add([]byte(`{"record":"meta","format":01,"id":"a"}`))
	f.Add([]byte(`{"record":"meta","format":1,"id":"a","reflects_on":"b","distill":true,"parent":{"session":"p","call_id":"c"}}`))
	f.Add([]byte(`{"record":"meta","id":"\ud83d","at":"2026-08-05T09:15:00+02:00"}`))
	f.Add([]byte(`{"record":"meta","id"x"abc"}`))
	f.Add([]byte(`{"record":"meta","id"`))
	f.Fuzz(func(t *testing.T, line []byte) {
		m, ok := fastMeta(line)
		if !ok {
			return
		}
		r, err := Decode(line)
		if err != nil {
			t.Fatalf("fast path accepted what Decode refuses (%v): %q", err, line)
		}
		if !reflect.DeepEqual(r, m) {
			t.Fatalf("fast %+v != slow %+v for %q", m, r, line)
		}
	})
}
