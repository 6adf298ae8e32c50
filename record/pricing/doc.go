// Package pricing turns token usage into dollars from a table of prices in
// USD per million tokens, as configured in config.toml. A transcript records
// tokens, never prices: every cost is computed at today's table, and a
// provider/model with no configured price has no cost, which is not $0.
// A price is a number from 0 to MaxPrice, so that every cost is finite.
package pricing
