package configcmd

import (
	"os"
	"time"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/engine/provider/anthropic"
	"github.com/mecha-agent/mecha/engine/provider/mock"
	"github.com/mecha-agent/mecha/engine/provider/openai"
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/harness/config"
	"github.com/mecha-agent/mecha/mcp/mcpclient"
	"github.com/mecha-agent/mecha/record/pricing"
)

// Effective is the configuration mecha runs with, as "config show"
// prints it: nothing in it is a secret.
type Effective struct {
	Home             string `toml:"home" json:"home"`
	SessionsDir      string `toml:"sessions_dir" json:"sessions_dir"`
	ConfigFile       string `toml:"config_file" json:"config_file"`
	ConfigFileExists bool   `toml:"config_file_exists" json:"config_file_exists"`
	LearnedRules     string `toml:"learned_rules" json:"learned_rules"`
	DefaultProvider  string `toml:"default_provider" json:"default_provider"`
	// TrustedWorkspaces are the directories trusted (mecha trust).
	TrustedWorkspaces []string `toml:"trusted_workspaces" json:"trusted_workspaces"`
	// Providers are every provider -p accepts.
	Providers map[string]Provider `toml:"providers" json:"providers"`
	Prices    pricing.Table       `toml:"prices" json:"prices"`
	MCP       MCP                 `toml:"mcp" json:"mcp"`
	WebFetch  WebFetch            `toml:"web_fetch" json:"web_fetch"`
	Trifecta  Trifecta            `toml:"trifecta" json:"trifecta"`
	Remotes   map[string]Remote   `toml:"remotes" json:"remotes"`
	Chat      Chat                `toml:"chat" json:"chat"`
	// Permissions are config.toml's saved permission rules (a
	// workspace's own and those saved from prompts are not shown here).
	Permissions Permissions `toml:"permissions" json:"permissions"`
}

// Chat is the interactive mode's settings.
type Chat struct {
	Notify string `toml:"notify" json:"notify"`
}

// Permissions is config.toml's [permissions].
type Permissions struct {
	Allow []string `toml:"allow" json:"allow"`
	Deny  []string `toml:"deny" json:"deny"`
}

// Remote is one remote's settings and whether its credentials are set
// (never their values).
type Remote struct {
	URL       string `toml:"url" json:"url"`
	Endpoint  string `toml:"endpoint,omitempty" json:"endpoint,omitempty"`
	Region    string `toml:"region,omitempty" json:"region,omitempty"`
	PathStyle bool   `toml:"path_style" json:"path_style"`
	// Credentials is "set (SOURCE)" or "not set (WHY)".
	Credentials string `toml:"credentials" json:"credentials"`
}

// WebFetch is what web_fetch refuses beyond link-local and metadata
// addresses.
type WebFetch struct {
	RefusePrivate bool `toml:"refuse_private" json:"refuse_private"`
}

// Trifecta is what the interlock trusts beyond what the prompts name.
type Trifecta struct {
	TrustedHosts []string `toml:"trusted_hosts" json:"trusted_hosts"`
}

// Provider is one provider's effective settings.
type Provider struct {
	Model   string `toml:"model" json:"model"`
	BaseURL string `toml:"base_url,omitempty" json:"base_url,omitempty"`
	// APIKeyEnv names the variable the key is read from; APIKey is "set"
	// or "not set", never the key.
	APIKeyEnv        string `toml:"api_key_env,omitempty" json:"api_key_env,omitempty"`
	APIKey           string `toml:"api_key,omitempty" json:"api_key,omitempty"`
	ConnectTimeout   string `toml:"connect_timeout,omitempty" json:"connect_timeout,omitempty"`
	FirstByteTimeout string `toml:"first_byte_timeout,omitempty" json:"first_byte_timeout,omitempty"`
	IdleTimeout      string `toml:"idle_timeout,omitempty" json:"idle_timeout,omitempty"`
}

// MCP holds the configured MCP servers.
type MCP struct {
	Servers map[string]Server `toml:"servers" json:"servers"`
}

// Server is one MCP server with its secrets redacted.
type Server struct {
	Command          string              `toml:"command,omitempty" json:"command,omitempty"`
	Args             []string            `toml:"args,omitempty" json:"args,omitempty"`
	Env              map[string]string   `toml:"env,omitempty" json:"env,omitempty"`
	URL              string              `toml:"url,omitempty" json:"url,omitempty"`
	Headers          map[string]string   `toml:"headers,omitempty" json:"headers,omitempty"`
	Transport        string              `toml:"transport" json:"transport"`
	Enabled          bool                `toml:"enabled" json:"enabled"`
	Tools            []string            `toml:"tools,omitempty" json:"tools,omitempty"`
	Capabilities     []string            `toml:"capabilities,omitempty" json:"capabilities,omitempty"`
	ToolCapabilities map[string][]string `toml:"tool_capabilities,omitempty" json:"tool_capabilities,omitempty"`
	TrustAnnotations bool                `toml:"trust_annotations" json:"trust_annotations"`
	StartupTimeout   string              `toml:"startup_timeout" json:"startup_timeout"`
	ToolTimeout      string              `toml:"tool_timeout" json:"tool_timeout"`
}

// Build merges the defaults, cfg and the environment.
func Build(env *cmdkit.Env, cfg *config.Config) (*Effective, error) {
	home, err := env.Home()
	if err != nil {
		return nil, err
	}
	store, err := env.Store()
	if err != nil {
		return nil, err
	}
	path, _ := configPath(env)
	_, statErr := os.Stat(path)
	e := &Effective{Home: home, SessionsDir: store.Dir, ConfigFile: path, ConfigFileExists: statErr == nil,
		LearnedRules: home + "/learned_rules.md", DefaultProvider: cfg.DefaultProvider,
		Providers: providers(env, cfg), Prices: cfg.Prices(), MCP: MCP{Servers: map[string]Server{}},
		WebFetch: WebFetch{RefusePrivate: cfg.WebFetch.RefusePrivate}, TrustedWorkspaces: cfg.TrustedWorkspaces,
		Trifecta:    Trifecta{TrustedHosts: orEmpty(cfg.Trifecta.TrustedHosts)},
		Permissions: Permissions{Allow: orEmpty(cfg.Permissions.Allow), Deny: orEmpty(cfg.Permissions.Deny)},
		Chat:        Chat{Notify: cfg.Chat.Notify}}
	if e.TrustedWorkspaces == nil {
		e.TrustedWorkspaces = []string{}
	}
	if e.Chat.Notify == "" {
		e.Chat.Notify = "bell"
	}
	if e.DefaultProvider == "" {
		e.DefaultProvider = mock.Name
	}
	if e.Prices == nil {
		e.Prices = pricing.Table{}
	}
	for name, s := range cfg.MCP.Servers {
		e.MCP.Servers[name] = server(s)
	}
	e.Remotes = map[string]Remote{}
	creds := "not set"
	if c, err := harness.RemoteCredentials(env.Vars); err == nil {
		creds = "set (" + c.Source + ")"
	} else {
		creds = "not set (" + err.Error() + ")"
	}
	for name, r := range cfg.Remotes {
		e.Remotes[name] = Remote{URL: r.URL, Endpoint: r.Endpoint, Region: r.Region, PathStyle: r.PathStyle, Credentials: creds}
	}
	return e, nil
}

// providers are the effective settings of every provider.
func providers(env *cmdkit.Env, cfg *config.Config) map[string]Provider {
	http := func(name, urlVar, def, keyVar string) Provider {
		t := provider.Timeouts(cfg.Timeouts(name)).WithDefaults()
		p := Provider{Model: harness.DefaultModel(cfg, name), BaseURL: cmdkit.RedactURL(firstOf(env.Vars.Get(urlVar), def)),
			ConnectTimeout: t.Connect.String(), FirstByteTimeout: t.FirstByte.String(), IdleTimeout: t.Idle.String()}
		if keyVar != "" {
			p.APIKeyEnv, p.APIKey = keyVar, "not set"
			if env.Vars.Get(keyVar) != "" {
				p.APIKey = "set"
			}
		}
		return p
	}
	return map[string]Provider{
		anthropic.Name:    http(anthropic.Name, "ANTHROPIC_BASE_URL", anthropic.DefaultBaseURL, "ANTHROPIC_API_KEY"),
		openai.NameOpenAI: http(openai.NameOpenAI, "OPENAI_BASE_URL", openai.DefaultBaseURL, "OPENAI_API_KEY"),
		openai.NameLocal:  http(openai.NameLocal, "MECHA_LOCAL_URL", openai.LocalDefaultBaseURL, ""),
		mock.Name:         {Model: harness.DefaultModel(cfg, mock.Name)},
	}
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// server is one MCP server's table with its secrets redacted and its
// defaults filled in.
func server(s config.MCPServer) Server {
	out := Server{Command: s.Command, Args: cmdkit.RedactArgs(s.Args), Env: redactValues(s.Env), URL: cmdkit.RedactURL(s.URL),
		Headers: redactValues(s.Headers), Transport: s.Transport, Enabled: s.Enabled == nil || *s.Enabled,
		Tools: s.Tools, Capabilities: s.Capabilities, ToolCapabilities: s.ToolCapabilities, TrustAnnotations: s.TrustAnnotations,
		StartupTimeout: seconds(s.StartupTimeoutS, mcpclient.DefaultStartupTimeout), ToolTimeout: seconds(s.ToolTimeoutS, mcpclient.DefaultToolTimeout)}
	if out.Transport == "" {
		out.Transport = mcpclient.TransportStdio
		if s.URL != "" {
			out.Transport = mcpclient.TransportHTTP
		}
	}
	return out
}

func seconds(n int, def time.Duration) string {
	if n > 0 {
		return (time.Duration(n) * time.Second).String()
	}
	return def.String()
}

// redactValues keeps a map's keys and replaces every value.
func redactValues(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k := range m {
		out[k] = cmdkit.Redacted
	}
	return out
}

// orEmpty is l, or an empty list for nil (shown as [] rather than null).
func orEmpty(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}
