// Package provider defines the neutral request and response types every
// model client speaks, the Provider interface, and the retry decorator that
// wraps any of them. Clients live in subpackages (anthropic, openai, mock);
// none of them imports the agent loop or the session store.
package provider
