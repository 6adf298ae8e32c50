package harness

import "testing"

func TestBuiltinCapabilities(t *testing.T) {
	t.Parallel()
	if c, ok := BuiltinCapabilities("shell"); !ok || !c.RunsCommands {
		t.Errorf("shell: %+v %v", c, ok)
	}
	if _, ok := BuiltinCapabilities("no_such_tool"); ok {
		t.Error("an unknown tool has capabilities")
	}
}
