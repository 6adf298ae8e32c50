// Package toolreplay is tool replay, the dual of model replay: it holds a
// session's tool calls fixed, with no model and no agent loop, and runs
// them again. Invoke runs one call as the agent loop would.
package toolreplay
