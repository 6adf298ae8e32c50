package transcript

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestStringValues(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want []string
	}{
		{`{"b":"two","a":["one",{"z":"four","y":"three"}],"n":3,"t":true,"k":null}`, []string{"one", "three", "four", "two"}},
		{`"alone"`, []string{"alone"}},
		{`{"key only":1}`, nil},
		{``, nil},
		{`{"broken":`, nil},
	} {
		var got []string
		StringValues(json.RawMessage(tc.raw), func(s string) { got = append(got, s) })
		if !slices.Equal(got, tc.want) {
			t.Errorf("StringValues(%s) = %q, want %q", tc.raw, got, tc.want)
		}
	}
}
