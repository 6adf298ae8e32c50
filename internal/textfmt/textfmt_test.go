package textfmt

import "testing"

func TestCuts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ got, want string }{
		{OneLine("  a\n\tb  c \r\n"), "a b c"},
		{Clip("héllo wörld", 20), "héllo wörld"},
		{Clip("héllo wörld", 7), "héllo…"},
		{Clip("abc", 0), "abc"},
		{JSON([]byte(`{ "z": 1,
  "a": [1, 2] }`), 100), `{"z":1,"a":[1,2]}`},
		{JSON([]byte(`{"path": "abcdefghij"}`), 12), `{"path":"ab…`},
		{JSON([]byte("not\njson"), 100), "not json"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
