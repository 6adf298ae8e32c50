package sessionview_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports keeps sessionview below replay and away from the network:
// replay imports it, so it must not import replay, agent or a provider,
// nor net/http.
func TestImports(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "github.com/mecha-agent/mecha/sessionview").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	const mod = "github.com/mecha-agent/mecha/"
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{mod + "replay", mod + "agent", mod + "provider", "net/http"} {
			if dep == banned || strings.HasPrefix(dep, banned+"/") {
				t.Errorf("sessionview imports %s", dep)
			}
		}
	}
}
