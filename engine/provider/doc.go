// Package provider defines the neutral request and response types every
// model client speaks, the Provider interface, the retry decorator that
// wraps any of them, and the Timeouts every HTTP client honours (what they
// bound, what counts as progress, and why the defaults are what they are). Clients live in subpackages (anthropic, openai, mock);
// none of them imports the agent loop or the session store.
package provider
