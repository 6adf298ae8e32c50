package regresscmd

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/testkit/cmdtest"
)

func TestShardsCoverEveryPinOnce(t *testing.T) {
	t.Parallel()
	var ids []string
	for i := range 23 {
		ids = append(ids, fmt.Sprintf("id%02d", i))
	}
	for n := 1; n <= 5; n++ {
		seen := map[string]int{}
		for i := 1; i <= n; i++ {
			for _, id := range shard(ids, i, n) {
				seen[id]++
			}
		}
		if len(seen) != len(ids) {
			t.Errorf("n=%d: %d pins covered", n, len(seen))
		}
		for id, c := range seen {
			if c != 1 {
				t.Errorf("n=%d: %s in %d shards", n, id, c)
			}
		}
	}
	if got := shard(ids[:5], 2, 2); !reflect.DeepEqual(got, []string{"id01", "id03"}) {
		t.Errorf("shard 2/2 = %v", got)
	}
}

func TestParseShard(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][2]int{"": {1, 1}, "1/1": {1, 1}, "2/3": {2, 3}} {
		i, n, err := parseShard(in)
		if err != nil || [2]int{i, n} != want {
			t.Errorf("parseShard(%q) = %d, %d, %v", in, i, n, err)
		}
	}
	for _, bad := range []string{"0/2", "3/2", "1/0", "a/b", "2", "1/2/3", "-1/2"} {
		if _, _, err := parseShard(bad); err == nil {
			t.Errorf("parseShard(%q) accepted", bad)
		}
	}
}

func TestRegressFlags(t *testing.T) {
	t.Parallel()
	parse := func(args ...string) (*RegressOptions, error) {
		var got *RegressOptions
		cmd := NewCmdRegress(&cmdkit.Env{}, func(_ context.Context, o *RegressOptions) error { got = o; return nil })
		err := cmdtest.Execute(cmd, args...)
		return got, err
	}
	o, err := parse("--shard", "2/3", "--repeat", "3", "--junit", "j.xml", "--on-divergence", "stop", "--request-timeout", "45s", "a", "b")
	if err != nil || o.Shard != "2/3" || o.Repeat != 3 || o.JUnit != "j.xml" || o.OnDivergence != "stop" || len(o.IDs) != 2 || o.Attach.RequestTimeout != 45*time.Second {
		t.Errorf("parsed %v %+v", err, o)
	}
	o, err = parse("-m", "a", "-m", "b", "--models", "c, d")
	if err != nil || !reflect.DeepEqual(o.Models, []string{"a", "b", "c", "d"}) || o.Attach.Model != "" {
		t.Errorf("models %v %+v", err, o)
	}
	if o, err = parse("--models", "a"); err != nil || o.Attach.Model != "a" {
		t.Errorf("one model %v %+v", err, o)
	}
	for _, args := range [][]string{{"-m", "a", "--models", "a"}, {"--models", "a,"}, {"--on-divergence", "live"}, {"--shard", "4/3"}, {"--on-divergence", "x"}, {"a", ""}, {"--repeat", "0"}} {
		o, err := parse(args...)
		var ue *cmdkit.UsageError
		if o != nil || !errors.As(err, &ue) {
			t.Errorf("regress %q: ran=%v err %v, want a usage error", args, o != nil, err)
		}
	}
}
