package attach

import (
	"errors"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/internal/buildinfo"
)

// World is the harness's view of a command's Env.
func World(env *cmdkit.Env) *harness.World {
	return &harness.World{Getenv: env.Vars, Environ: env.Environ, Now: env.Clock.Now, HTTPClient: env.HTTPClient,
		Executable: env.Executable, Err: env.Err, In: env.In, InTTY: env.InTTY,
		Version: buildinfo.Version()}
}

// Usage makes the harness's usage errors the CLI's (exit 2), and leaves
// other errors as they are.
func Usage(err error) error {
	var u *harness.UsageError
	if errors.As(err, &u) {
		return &cmdkit.UsageError{Err: err}
	}
	return err
}
