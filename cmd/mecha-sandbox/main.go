// Command mecha-sandbox is mecha's sandbox helper alone: what mecha
// starts for each confined shell call (see engine/sandbox), without the
// rest of mecha, so that it starts in a fraction of the time. mecha uses
// it when it lies beside mecha's executable and holds the same sandbox
// (`go install ./cmd/...` installs both); otherwise mecha starts itself
// as the helper. Run by hand it is of no use: it takes only the hidden
// arguments mecha gives it (`__mecha_sandbox_exec --digest` prints which
// sandbox it holds).
package main

import (
	"os"

	"github.com/mecha-agent/mecha/engine/sandbox"
)

func main() { os.Exit(sandbox.Helper(os.Args[1:])) }
