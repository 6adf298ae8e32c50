// Command mecha is an agent harness whose every run is a reproducible record.
package main

import (
	"os"

	"github.com/mecha-agent/mecha/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:])) }
