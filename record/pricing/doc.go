// Package pricing turns token usage into dollars from a table of prices in
// USD per million tokens. A transcript records tokens, never prices: every
// cost is computed at today's table, and a provider/model with no price
// has no cost, which is not $0. A price is a number from 0 to MaxPrice, so
// that every cost is finite.
//
// mecha ships a dated table (prices.toml, Builtin): the list prices of
// Anthropic's and OpenAI's current models as their pricing pages stated
// them on its date, with the page each was read from, and local and mock
// models at 0. config.toml's [prices] goes over it (Merge): config wins
// model by model, and its "*" for a provider replaces the shipped models
// of that provider. A table older than StaleAfter is reported by
// "mecha doctor".
package pricing
