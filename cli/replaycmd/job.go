package replaycmd

import (
	"context"

	"github.com/mecha-agent/mecha/cli/attach"
	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/redrive/replay"
)

// Settings are the choices a replay is made with.
type Settings struct {
	// Attach are the flags a replay shares with run (see OpenReplay):
	// -p and -m, which replace the recorded provider and model,
	// --mock-script, --yes and --read-only, -w, --request-timeout and the
	// MCP flags.
	Attach harness.Settings
	Mode   replay.Mode
	Record bool
	// Quiet keeps the note naming each replay's session off stderr
	// (regress reports in its own table).
	Quiet bool
}

// Open opens the door through which s is replayed (close it).
func Open(ctx context.Context, env *cmdkit.Env, s *session.Session, set Settings) (*harness.Door, error) {
	return harness.OpenReplay(ctx, attach.World(env), harness.Attach{Settings: set.Attach, NoSession: !set.Record, Quiet: set.Quiet},
		harness.Replayed{Session: s, Mode: set.Mode})
}
