package mcpserve

import "testing"

func TestUnescapeHTML(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`"a\u003cb\u003e\u0026c"`: `"a<b>&c"`,
		`"\\u003c"`:               `"\\u003c"`, // a backslash, then the text u003c
		`"\\\u003c"`:              `"\\<"`,
		`"\u2028\n\""`:            `"\u2028\n\""`,
		`"plain"`:                 `"plain"`,
	} {
		if got := string(unescapeHTML([]byte(in))); got != want {
			t.Errorf("unescapeHTML(%s) = %s, want %s", in, got, want)
		}
	}
}
