package cli

import (
	"context"
	"io"
	"testing"
)

func BenchmarkListCmd(b *testing.B) {
	env := &Env{Out: io.Discard, Err: io.Discard, Getenv: func(k string) string {
		if k == "MECHA_SESSION_DIR" {
			return "/tmp/mecha-bench/store-10000-1024"
		}
		return ""
	}}
	for b.Loop() {
		if Run(context.Background(), env, []string{"sessions", "list"}) != 0 {
			b.Fatal("failed")
		}
	}
}
