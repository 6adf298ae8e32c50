// Package config reads $MECHA_HOME/config.toml (default ~/.mecha): prices
// and per-provider settings. Decoding is strict, so a misspelt key is an
// error that names it and its line instead of a setting silently ignored.
package config
