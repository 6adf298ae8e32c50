// Package harness is the one door through which mecha runs an agent. An
// entrance describes what it wants as an Attach (a new, resumed or no
// session; the Settings that shape it; who watches the events and who
// answers questions) and Open does the rest: config.toml is read, the
// settings resolved over it and over the resumed session's last attach
// (Resolve: resume inheritance, AGENTS.md, learned rules and the taint they
// carry), the provider built (NewProvider), the MCP servers started, the
// tool surface built with the one policy chain (BuildTools), and the record
// opened lazily and held under the session's one-writer lock. Door.Run
// then runs the loop for one prompt; Close lets go of everything.
//
// The entrances that run no model (tool call and tool list, rerun, a
// script's calls, which are tool calls, mcp call and mcp serve) describe
// their surface as a SurfaceSpec, stating only how it differs from a new
// run's; OpenSurface builds it as a Door builds a prompt's (one function,
// surfaceOn, for both), its tracker starting from the taint the spec
// gives. A replay opens its Door with OpenReplay and Door.Replay hands
// redrive/replay, which drives the recorded turns, the door's providers
// (ProviderFor) and a tool surface per recorded attach built as a run's,
// and records the replay as a session of its own. A reflection or a
// distillation is a Question asked through Ask: one tool-less model call
// under a question's configuration, its prompt's taint recorded before
// the answer. A subagent's child runs on the surface and provider its
// parent's Door hands the agent tool.
//
// The harness reads the world only through its World (variables, the
// clock, the HTTP client, the kernel's sandbox support), which the CLI
// builds from its Env.
package harness
