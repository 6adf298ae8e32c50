package tool

import "testing"

// TestUnionKeepsEachCapability: the union of two declarations can do
// whatever either can, one capability at a time and from either side, so
// that a child tool declaring only one of them (RunsCommands, say) is
// never judged by the gate as doing less.
func TestUnionKeepsEachCapability(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]Capabilities{
		"ReadsWorkspace":    {ReadsWorkspace: true},
		"ModifiesWorkspace": {ModifiesWorkspace: true},
		"RunsCommands":      {RunsCommands: true},
		"ReachesNetwork":    {ReachesNetwork: true},
		"ActsOutward":       {ActsOutward: true},
		"External":          {External: true},
	} {
		if got := c.Union(Capabilities{}); got != c {
			t.Errorf("%s ∪ nothing = %+v, want %+v", name, got, c)
		}
		if got := (Capabilities{}).Union(c); got != c {
			t.Errorf("nothing ∪ %s = %+v, want %+v", name, got, c)
		}
		if got := c.Union(c); got != c {
			t.Errorf("%s ∪ %s = %+v, want %+v", name, name, got, c)
		}
	}
	if got := (Capabilities{}).Union(Capabilities{}); got != (Capabilities{}) {
		t.Errorf("nothing ∪ nothing = %+v", got)
	}
	all := Capabilities{ReadsWorkspace: true, ModifiesWorkspace: true, RunsCommands: true, ReachesNetwork: true, ActsOutward: true, External: true}
	a := Capabilities{ReadsWorkspace: true, RunsCommands: true, ActsOutward: true, External: true}
	b := Capabilities{ModifiesWorkspace: true, ReachesNetwork: true}
	if got := a.Union(b); got != all {
		t.Errorf("%+v ∪ %+v = %+v, want %+v", a, b, got, all)
	}
}
