// Package replay re-drives a recorded session against a model with the
// recorded tool results, and reports where the new run departs from the
// recording.
//
// Extract reduces a transcript to a Trajectory: the user's turns, every
// tool call paired with its recorded result (by id, never by position), the
// final text, and whether the person steered mid-run. Replay runs each turn
// again through the agent loop under the configuration it was recorded
// with, on the provider and model of the attach that recorded it unless an
// Override names others for the whole replay; every tool is wrapped so the model sees today's spec but gets the
// recorded result, so the model is the only live component. Calls are
// compared by position: a different tool, different arguments (compared as
// JSON values), a call past the recording, or a call the replay did not
// make. Only argument differences are cosmetic; what a structural
// divergence does depends on the Mode. A tool whose spec (description or
// input schema) differs from the one recorded in the config is noted in
// the report, not counted as a divergence: the model was offered today's.
//
// Before any turn is sent, each attach's recorded request is compared
// with the one the replay will send (its config with today's tool specs,
// and -p, -m or a system prompt tried in its place): a Fingerprint hashes
// each part (system prompt, tools, each tool's spec, model, provider,
// sampling, limits), and only the parts whose hashes differ are compared
// in detail, into RequestChanges (a prompt or a spec as a unified diff).
// Each divergence names the changes of its attach that may explain it
// (After), those about its own tools first.
//
// A recorded result given back carries the recording's taint at its call
// (the checkpoint covering it, merged with every earlier one; none:
// private and untrusted), absorbed into the turn's tracker once the
// answer's calls are answered: the replay's checkpoints are as armed as
// what it replayed, and a live call after it is judged by the interlock
// as the recorded run's would have been.
//
// The comparison code imports nothing that reaches the network.
package replay
