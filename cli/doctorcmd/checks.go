package doctorcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mecha-agent/mecha/cli/attach"
	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/engine/provider/anthropic"
	"github.com/mecha-agent/mecha/engine/provider/openai"
	"github.com/mecha-agent/mecha/engine/sandbox"
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/harness/config"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/mcp/mcpclient"
)

// checkKeys says whether each hosted provider's key is set, never what
// it is.
func checkKeys(env *cmdkit.Env, cfg *config.Config) []Check {
	var out []Check
	for _, p := range []struct{ name, key string }{{anthropic.Name, "ANTHROPIC_API_KEY"}, {openai.NameOpenAI, "OPENAI_API_KEY"}} {
		c := Check{Name: p.name, Status: OK, Detail: p.key + " is set"}
		if env.Vars.Get(p.key) == "" {
			c.Status, c.Detail = severity(cfg, p.name), p.key+" is not set"
			c.Fix = fmt.Sprintf("export %s=<your key> (only -p %s needs it)", p.key, p.name)
		}
		out = append(out, c)
	}
	return out
}

// checkLocal asks the local server for its models.
func checkLocal(ctx context.Context, env *cmdkit.Env, cfg *config.Config, timeout time.Duration) Check {
	base := env.Vars.Get("MECHA_LOCAL_URL")
	if base == "" {
		base = openai.LocalDefaultBaseURL
	}
	shown := cmdkit.RedactURL(base)
	c := Check{Name: openai.NameLocal, Status: severity(cfg, openai.NameLocal)}
	fix := "start llama-server or Ollama there, or point MECHA_LOCAL_URL at it (only -p local needs it)"
	models, err := listModels(ctx, env.HTTPClient, strings.TrimRight(base, "/")+"/v1/models", timeout)
	_, tables := cfg.Providers[openai.NameLocal]
	switch {
	case err != nil && env.Vars.Get("MECHA_LOCAL_URL") == "" && !tables && cfg.DefaultProvider != openai.NameLocal:
		// Nothing says a local server is used: its absence is no fault.
		c.Status, c.Detail = OK, fmt.Sprintf("no local server at %s (none configured; only -p local needs one)", shown)
		return c
	case err != nil:
		c.Detail, c.Fix = fmt.Sprintf("%s: %s", shown, err), fix
		return c
	}
	c.Status = OK
	c.Detail = shown + " answers"
	if len(models) > 0 {
		c.Detail += ", serving " + textfmt.Clip(strings.Join(models, ", "), 200)
	}
	return c
}

// listModels is GET /v1/models within timeout.
func listModels(ctx context.Context, client *http.Client, url string, timeout time.Duration) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("not a URL: %v", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("no answer within %s", timeout)
		}
		return nil, fmt.Errorf("not reachable: %s", unwrapURLError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /v1/models answered %s", resp.Status)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&list); err != nil {
		return nil, errors.New("GET /v1/models did not answer an OpenAI-compatible model list")
	}
	var ids []string
	for _, m := range list.Data {
		ids = append(ids, m.ID)
	}
	return ids, nil
}

// unwrapURLError drops net/http's "Get "URL": " prefix: the URL is shown
// already (redacted).
func unwrapURLError(err error) string {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) && ue.Unwrap() != nil {
		return ue.Unwrap().Error()
	}
	return err.Error()
}

// checkMCP starts every configured server, as a run would, and lists its
// tools.
func checkMCP(ctx context.Context, env *cmdkit.Env, cfg *config.Config, f harness.MCP) []Check {
	if f.Off {
		return nil
	}
	servers, err := harness.MCPServers(cfg, f.Files)
	if err != nil {
		return []Check{{Name: "mcp", Status: Problem, Detail: err.Error(), Fix: "correct the server's table or file where the message says"}}
	}
	if len(servers) == 0 {
		return []Check{{Name: "mcp", Status: OK, Detail: "no MCP servers configured"}}
	}
	set := mcpclient.Start(ctx, servers, harness.MCPOptions(attach.World(env), ""))
	defer set.Close()
	var out []Check
	for _, s := range set.Servers() {
		out = append(out, mcpCheck(s))
	}
	return out
}

func mcpCheck(s *mcpclient.Server) Check {
	sc := s.Config()
	c := Check{Name: "mcp:" + sc.Name, Status: OK}
	switch {
	case sc.Disabled:
		c.Detail = "disabled (enabled = false): not started"
	case s.Err != nil:
		c.Status, c.Detail = Problem, "did not start: "+s.Err.Error()
		c.Fix = "check its command or url"
		if sc.Source != "" {
			c.Fix += " in " + sc.Source
		}
		c.Fix += ", or set enabled = false; mecha mcp list shows the same start"
	default:
		names := make([]string, 0, len(s.Tools()))
		for _, t := range s.Tools() {
			names = append(names, t.Spec().Name)
		}
		c.Detail = fmt.Sprintf("started (%s), %d %s", sc.Kind(), len(names), textfmt.Plural(len(names), "tool", "tools"))
		if len(names) > 0 {
			c.Detail += ": " + textfmt.Clip(strings.Join(names, ", "), 200)
		}
		for _, w := range s.Warnings {
			c.Status, c.Detail = Warning, c.Detail+"; "+w
			c.Fix = "see the warning; mecha mcp list shows the server's tools"
		}
	}
	return c
}

// checkSandbox says what this kernel enforces of the shell's default
// sandbox (landlock, network cut).
func checkSandbox(probe func() sandbox.Support) Check {
	if probe == nil {
		probe = sandbox.Probe
	}
	sup := probe()
	got, note := sandbox.Resolve(sandbox.Setting{Mode: sandbox.ModeLandlock}, sup)
	c := Check{Name: "sandbox", Status: OK}
	if note != "" {
		c.Status, c.Detail = Warning, strings.TrimPrefix(note, "sandbox: ")
		if sup.NamespacesWhy != "" && !got.Namespaces {
			c.Detail += " (the trial: " + sup.NamespacesWhy + ")"
		}
		c.Fix = "run mecha on a Linux kernel with Landlock (5.13 or later, enabled in lsm=) and seccomp to confine the shell"
		if got.Confined() && got.NetworkCut() && !got.Namespaces {
			c.Fix = "allow user namespaces (sysctl user.max_user_namespaces > 0, kernel.unprivileged_userns_clone=1, AppArmor's restrict_unprivileged_userns off; in a container, a seccomp profile that allows them) to add them to the sandbox"
		}
		return c
	}
	c.Detail = fmt.Sprintf("the shell is confined: namespaces, %s (ABI %d), network cut by seccomp; %s", got.Mode, sup.Landlock, helperUsed())
	return c
}

// helperUsed says which executable confines each shell call: the small
// helper beside mecha, or mecha itself (and why the helper was passed over).
func helperUsed() string {
	exe, err := os.Executable()
	if err != nil {
		return "helper: unknown (" + err.Error() + ")"
	}
	h, note := sandbox.HelperExecutable(exe)
	switch {
	case h != exe:
		return "helper: " + h
	case note != "":
		return "helper: mecha itself (" + note + ")"
	}
	return "helper: mecha itself (go install ./cmd/... adds " + sandbox.SideHelperName + " beside it, which starts each confined call faster)"
}

// lowDisk is the free space under which the store gets a warning.
const lowDisk = 512 << 20

// checkStore looks at the session directory: there (or creatable),
// writable, its sessions and the files it passes over, free space.
func checkStore(env *cmdkit.Env) []Check {
	store, err := env.Store()
	if err != nil {
		return []Check{{Name: "store", Status: Problem, Detail: err.Error(), Fix: "set MECHA_SESSION_DIR or MECHA_HOME"}}
	}
	dir := store.Dir
	c := Check{Name: "store", Status: OK}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		c, parent := storeMissing(dir)
		return []Check{c, diskCheck(parent)}
	case err != nil:
		return []Check{{Name: "store", Status: Problem, Detail: err.Error(), Fix: "set MECHA_SESSION_DIR to a directory you own"}}
	case !fi.IsDir():
		return []Check{{Name: "store", Status: Problem, Detail: dir + " is not a directory", Fix: "move it aside, or set MECHA_SESSION_DIR to a directory"}}
	}
	if err := unix.Access(dir, unix.W_OK|unix.X_OK); err != nil {
		c.Status, c.Fix = Problem, fmt.Sprintf("chmod u+wx %s, or set MECHA_SESSION_DIR to a directory you can write", dir)
		c.Detail = fmt.Sprintf("%s is not writable (%v): runs cannot be recorded", dir, err)
		return []Check{c, diskCheck(dir)}
	}
	l, err := store.List()
	if err != nil {
		c.Status, c.Detail, c.Fix = Problem, err.Error(), "make the directory readable: chmod u+rx "+dir
		return []Check{c, diskCheck(dir)}
	}
	c.Detail = fmt.Sprintf("%s: %d %s", dir, len(l.Sessions), textfmt.Plural(len(l.Sessions), "session", "sessions"))
	return append(append([]Check{c}, storeFiles(l)...), diskCheck(dir))
}

// storeMissing is the store before the first run: fine when its nearest
// existing parent can be written.
func storeMissing(dir string) (Check, string) {
	c := Check{Name: "store", Status: OK, Detail: dir + " does not exist yet; the first recorded run creates it"}
	p := filepath.Dir(dir)
	for {
		if _, err := os.Stat(p); err == nil || p == filepath.Dir(p) {
			break
		}
		p = filepath.Dir(p)
	}
	if err := unix.Access(p, unix.W_OK|unix.X_OK); err != nil {
		c.Status = Problem
		c.Detail = fmt.Sprintf("%s does not exist and cannot be created: %s is not writable", dir, p)
		c.Fix = "create it (mkdir -p " + dir + ") or set MECHA_SESSION_DIR to a directory you can write"
	}
	return c, p
}
