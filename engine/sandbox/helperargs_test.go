package sandbox

import (
	"reflect"
	"strings"
	"testing"
)

// TestParseHelperArgs: the helper takes exactly HelperArg POLICY -- PROG
// [ARG...], with POLICY the JSON Command writes (no unknown field) and
// absolute directories, and refuses anything else (it then runs nothing:
// Helper exits 126).
func TestParseHelperArgs(t *testing.T) {
	t.Parallel()
	// Command's own output parses back to what it was given.
	c, err := Command(Setting{Mode: ModeLandlock, Namespaces: true}, View{Workspace: "/ws", Tmp: "/tmp/x", Deny: []string{"/home/u/.ssh"}}, "/bin/mecha", "mecha", "/bin/sh", "-c", "true")
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseHelperArgs(c.Args[1:])
	want := policy{Namespaces: true, Workspace: "/ws", Tmp: "/tmp/x", Deny: []string{"/home/u/.ssh"}, Lifeline: true, argv: []string{"/bin/sh", "-c", "true"}}
	if err != nil || !reflect.DeepEqual(got, want) || !c.Namespaces || !c.Lifeline || c.Path != "/bin/mecha" {
		t.Errorf("parseHelperArgs(%q) = %+v, %v; want %+v", c.Args, got, err, want)
	}
	ok := []struct {
		args []string
		want policy
	}{
		{[]string{HelperArg, `{"workspace":"/ws","tmp":"/tmp/x"}`, "--", "/bin/sh"},
			policy{Workspace: "/ws", Tmp: "/tmp/x", argv: []string{"/bin/sh"}}},
		{[]string{HelperArg, `{"network":true,"workspace":"/ws","tmp":"/tmp/x"}`, "--", "/bin/sh", "-c", "true"},
			policy{Network: true, Workspace: "/ws", Tmp: "/tmp/x", argv: []string{"/bin/sh", "-c", "true"}}},
	}
	for _, tc := range ok {
		got, err := parseHelperArgs(tc.args)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseHelperArgs(%q) = %+v, %v; want %+v", tc.args, got, err, tc.want)
		}
	}
	const p = `{"workspace":"/ws","tmp":"/tmp/x"}`
	bad := []struct {
		args []string
		why  string // a part of the error
	}{
		{nil, "usage"},
		{[]string{HelperArg, p, "--"}, "usage"}, // no program
		{[]string{"run", p, "--", "/bin/sh"}, "usage"},
		{[]string{HelperArg, p, "-", "/bin/sh"}, "usage"},
		{[]string{HelperArg, p, "/bin/sh", "--"}, "usage"},
		{[]string{HelperArg, `{"network":2,"workspace":"/ws","tmp":"/t"}`, "--", "/bin/sh"}, "policy"},
		{[]string{HelperArg, `{"net":true,"workspace":"/ws","tmp":"/t"}`, "--", "/bin/sh"}, "policy"},
		{[]string{HelperArg, `0`, "--", "/bin/sh"}, "policy"},
		{[]string{HelperArg, `{"workspace":"ws","tmp":"/tmp/x"}`, "--", "/bin/sh"}, `"ws" is not an absolute path`},
		{[]string{HelperArg, `{"workspace":"/ws","tmp":"tmp"}`, "--", "/bin/sh"}, `"tmp" is not an absolute path`},
		{[]string{HelperArg, `{"tmp":"/tmp/x"}`, "--", "/bin/sh"}, `"" is not an absolute path`},
		{[]string{HelperArg, `{"workspace":"/ws","tmp":"/t","deny":["x"]}`, "--", "/bin/sh"}, `"x" is not an absolute path`},
	}
	for _, tc := range bad {
		got, err := parseHelperArgs(tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.why) || !reflect.DeepEqual(got, policy{}) {
			t.Errorf("parseHelperArgs(%q) = %+v, %v; want an error saying %q", tc.args, got, err, tc.why)
		}
	}
}
