// Command mecha is an agent harness whose every run is a reproducible record.
package main

import (
	"os"

	"github.com/mecha-agent/mecha/cli/root"
)

func main() { os.Exit(root.Main(os.Args[1:])) }
