// Package attach is the CLI's side of the harness: the flags that shape an
// attach, declared once (run and chat take them all; replay, regress,
// tool call, rerun and mcp serve the groups that apply to them, replay and
// regress with -p and -m replacing the recorded provider and model), and the
// harness's World made from a command's Env.
package attach
