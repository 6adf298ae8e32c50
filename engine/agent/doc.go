// Package agent is the loop: it sends the conversation to a provider, runs
// the tool calls of each answer (concurrently, results returned in call
// order), enforces the run's budgets, compacts the conversation when it
// grows past the configured size, and hands every message, the taint
// checkpoint and the summary to a Recorder as it goes. It knows nothing of
// files or flags: the caller opens the session and builds the tools.
package agent
