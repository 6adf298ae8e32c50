package sandbox

import (
	"reflect"
	"strings"
	"testing"
)

// TestParseHelperArgs: the helper takes exactly HelperArg NET WORKSPACE
// TMP -- PROG [ARG...], with NET 0 or 1 and absolute directories, and
// refuses anything else (it then runs nothing: Helper exits 126).
func TestParseHelperArgs(t *testing.T) {
	t.Parallel()
	ok := []struct {
		args []string
		want policy
	}{
		{[]string{HelperArg, "0", "/ws", "/tmp/x", "--", "/bin/sh"},
			policy{workspace: "/ws", tmp: "/tmp/x", argv: []string{"/bin/sh"}}},
		{[]string{HelperArg, "1", "/ws", "/tmp/x", "--", "/bin/sh", "-c", "true"},
			policy{network: true, workspace: "/ws", tmp: "/tmp/x", argv: []string{"/bin/sh", "-c", "true"}}},
	}
	for _, tc := range ok {
		got, err := parseHelperArgs(tc.args)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseHelperArgs(%q) = %+v, %v; want %+v", tc.args, got, err, tc.want)
		}
	}
	bad := []struct {
		args []string
		why  string // a part of the error
	}{
		{nil, "usage"},
		{[]string{HelperArg, "0", "/ws", "/tmp/x", "--"}, "usage"}, // no program
		{[]string{"run", "0", "/ws", "/tmp/x", "--", "/bin/sh"}, "usage"},
		{[]string{HelperArg, "0", "/ws", "/tmp/x", "-", "/bin/sh"}, "usage"},
		{[]string{HelperArg, "0", "/ws", "/tmp/x", "/bin/sh", "--"}, "usage"},
		{[]string{"run", "0", "/ws", "/tmp/x", "-", "/bin/sh"}, "usage"},
		{[]string{HelperArg, "2", "/ws", "/tmp/x", "--", "/bin/sh"}, "network must be 0 or 1"},
		{[]string{HelperArg, "", "/ws", "/tmp/x", "--", "/bin/sh"}, "network must be 0 or 1"},
		{[]string{HelperArg, "0", "ws", "/tmp/x", "--", "/bin/sh"}, `"ws" is not an absolute path`},
		{[]string{HelperArg, "1", "/ws", "tmp", "--", "/bin/sh"}, `"tmp" is not an absolute path`},
		{[]string{HelperArg, "0", "", "/tmp/x", "--", "/bin/sh"}, `"" is not an absolute path`},
	}
	for _, tc := range bad {
		got, err := parseHelperArgs(tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.why) || !reflect.DeepEqual(got, policy{}) {
			t.Errorf("parseHelperArgs(%q) = %+v, %v; want an error saying %q", tc.args, got, err, tc.why)
		}
	}
}
