package attach

import (
	"errors"
	"time"

	"github.com/spf13/cobra"
)

// RequestTimeoutFlag adds --request-timeout to a command that talks to
// providers, parsed into d. A duration that is not positive is a usage
// error; unset, d stays 0.
func RequestTimeoutFlag(cmd *cobra.Command, d *time.Duration) {
	cmd.Flags().Var((*positiveDuration)(d), "request-timeout",
		"wait at most `DURATION` for a provider's connection, for the first part of its answer and between parts (default: config.toml's timeouts, else 30s, 10m, 5m)")
}

// positiveDuration is a flag value that refuses zero and negative durations.
type positiveDuration time.Duration

func (p *positiveDuration) String() string {
	if *p == 0 {
		return ""
	}
	return time.Duration(*p).String()
}

func (p *positiveDuration) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("not a duration (write it like 90s or 10m)")
	}
	if d <= 0 {
		return errors.New("must be positive")
	}
	*p = positiveDuration(d)
	return nil
}

func (p *positiveDuration) Type() string { return "duration" }
