package config

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/mecha-agent/mecha/internal/safeopen"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/pricing"
)

// Provider holds the settings of one provider.
type Provider struct {
	// Model replaces the provider's built-in default model.
	Model string `toml:"model"`
	// RequestTimeout sets the three timeouts below at once, as mecha run's
	// --request-timeout does; each of them, when set, overrides it.
	RequestTimeout Duration `toml:"request_timeout"`
	// ConnectTimeout, FirstByteTimeout and IdleTimeout bound the
	// provider's silences (see provider.Timeouts).
	ConnectTimeout   Duration `toml:"connect_timeout"`
	FirstByteTimeout Duration `toml:"first_byte_timeout"`
	IdleTimeout      Duration `toml:"idle_timeout"`
}

// Duration is a positive duration written as a string: "90s", "10m",
// "1h30m". A bare number is refused, for it has no unit.
type Duration struct{ time.Duration }

// UnmarshalText parses a duration.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration (write it like \"90s\" or \"10m\")", b)
	}
	if v <= 0 {
		return fmt.Errorf("%q is not a positive duration", b)
	}
	d.Duration = v
	return nil
}

// Timeouts are the timeouts configured for a provider; zero where none is.
type Timeouts struct {
	Connect, FirstByte, Idle time.Duration
}

// Config is the content of config.toml.
type Config struct {
	// DefaultProvider is the provider mecha run uses without -p ("mock"
	// when unset).
	DefaultProvider string `toml:"default_provider"`
	// Reflect makes mecha run reflect on each session when the run closes,
	// as --reflect does.
	Reflect bool `toml:"reflect"`
	// FilePrices is config.toml's own [prices] (nil when it has none);
	// Prices is what is in effect.
	FilePrices pricing.Table       `toml:"prices"`
	Providers  map[string]Provider `toml:"providers"`
	MCP        MCP                 `toml:"mcp"`
	// Subagents offers the "agent" tool (a sub-task run as a child run)
	// beside every other tool when mecha run is not given --tool.
	Subagents bool     `toml:"subagents"`
	WebFetch  WebFetch `toml:"web_fetch"`
	// Trifecta is the [trifecta] table: what the interlock trusts.
	Trifecta Trifecta `toml:"trifecta"`
	// Remotes are the team stores on S3-compatible object storage:
	// [remotes.NAME] tables (see Remote).
	Remotes map[string]Remote `toml:"remotes"`
	// TrustedWorkspaces are the directories whose files are the owner's
	// (mecha trust): each trusts the directories beneath it. A workspace
	// no entry covers is untrusted: what the tools read there counts as
	// untrusted as well as private, and its AGENTS.md or CLAUDE.md is left
	// out of the system prompt. Absolute paths, written canonical by mecha
	// trust.
	TrustedWorkspaces []string `toml:"trusted_workspaces"`
	Sandbox           Sandbox  `toml:"sandbox"`
	// Permissions are the saved permission rules.
	Permissions Permissions `toml:"permissions"`
	Chat        Chat        `toml:"chat"`
	// Path is where the configuration was read from ("" when there was no file).
	Path string `toml:"-"`

	// merged is Prices, merged at its first call.
	merged *mergedPrices
}

// WebFetch is the [web_fetch] table.
type WebFetch struct {
	// RefusePrivate makes web_fetch refuse private addresses too: loopback,
	// RFC 1918, shared (100.64.0.0/10), unique-local and site-local.
	// Link-local and cloud-metadata addresses are refused either way. Off
	// by default: local development servers are normal targets (and
	// mecha's own tests fetch from loopback servers).
	RefusePrivate bool `toml:"refuse_private"`
}

// Trifecta is the [trifecta] table.
type Trifecta struct {
	// TrustedHosts are hosts a call that reaches the network may reach
	// once the conversation holds untrusted content, though no prompt
	// named them (the interlock's rule on where a destination came from):
	// exact names ("www." does not matter), or "*.host" for host's
	// subdomains, as [sandbox] allow_domains writes them (whose hosts the
	// interlock trusts too).
	TrustedHosts []string `toml:"trusted_hosts"`
}

// Remote is one [remotes.NAME] table: a bucket and prefix on an
// S3-compatible server. It holds no credential: those come from the usual
// AWS environment variables and files when the remote is opened.
type Remote struct {
	// URL is s3://BUCKET[/PREFIX].
	URL string `toml:"url"`
	// Endpoint is the server's base URL (http://127.0.0.1:7070); empty
	// for AWS itself.
	Endpoint string `toml:"endpoint"`
	// Region defaults to us-east-1.
	Region string `toml:"region"`
	// PathStyle addresses the bucket in the path, not the host name.
	PathStyle bool `toml:"path_style"`
}

// Sandbox is the [sandbox] table: what the confined shell may read.
type Sandbox struct {
	// ReadDeny adds paths (absolute, or ~/...) the shell may not read to
	// the defaults (mecha's home, credential files, shell histories,
	// other users' homes); ReadAllow lifts any denied path equal to or
	// beneath one of its paths.
	ReadDeny  []string `toml:"read_deny"`
	ReadAllow []string `toml:"read_allow"`
	// AllowDomains are hosts the shell may reach through mecha's egress
	// proxy, its network otherwise cut (added to --allow-domain): exact
	// names, or "*.host" for host's subdomains. SendDomains marks those
	// of them able to receive data (an API you post to, not a package
	// registry you download from): with one allowed, the shell counts as
	// able to send data out, and the interlock judges it so.
	AllowDomains []string `toml:"allow_domains"`
	SendDomains  []string `toml:"send_domains"`
}

// Permissions is the [permissions] table: rules (tool.Rule) that allow
// calls without asking or deny them whatever the mode, in every
// workspace. A workspace's own .mecha/permissions.toml may deny calls, and
// allow them only once the workspace is trusted (TrustedWorkspaces).
type Permissions struct {
	Allow []string `toml:"allow"`
	Deny  []string `toml:"deny"`
}

// Chat is the [chat] table: the interactive mode's settings.
type Chat struct {
	// Notify is how the chat calls for attention when a permission
	// question waits or a run ends while its window is not focused: "bell"
	// (the default), "osc9" (a desktop notification: iTerm2, WezTerm,
	// Windows Terminal, ...), "osc777" (rxvt-unicode, foot, VTE terminals)
	// or "off".
	Notify string `toml:"notify"`
}

// NotifyModes are the values of [chat] notify.
var NotifyModes = []string{"bell", "osc9", "osc777", "off"}

// MCP holds the MCP servers: [mcp.servers.NAME] tables.
type MCP struct {
	Servers map[string]MCPServer `toml:"servers"`
}

// MCPServer is one [mcp.servers.NAME] table. Values may hold ${VAR}
// references, expanded when the server is started.
type MCPServer struct {
	Command string            `toml:"command"`
	Args    []string          `toml:"args"`
	Env     map[string]string `toml:"env"`
	URL     string            `toml:"url"`
	Headers map[string]string `toml:"headers"`
	// Transport is "http" (default for a url) or "sse".
	Transport string `toml:"transport"`
	// Enabled = false keeps the server configured but never started.
	Enabled *bool `toml:"enabled"`
	// Tools offers only these of the server's tools.
	Tools []string `toml:"tools"`
	// Capabilities narrows what its tools declare (default: everything).
	Capabilities []string `toml:"capabilities"`
	// ToolCapabilities is what single tools declare, by the server's name
	// for each ([mcp.servers.NAME.tool_capabilities] TOOL = [...]): an
	// entry replaces Capabilities for its tool. It is a table of its own,
	// not [mcp.servers.NAME.tools.TOOL], because TOML cannot hold tools
	// both as the list above and as a table.
	ToolCapabilities map[string][]string `toml:"tool_capabilities"`
	TrustAnnotations bool                `toml:"trust_annotations"`
	StartupTimeoutS  int                 `toml:"startup_timeout_s"`
	ToolTimeoutS     int                 `toml:"tool_timeout_s"`
}

// Home returns mecha's home directory: $MECHA_HOME, else ~/.mecha.
func Home(getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if h := getenv("MECHA_HOME"); h != "" {
		return filepath.Abs(h)
	}
	home := getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", errors.New("config: no home directory: set MECHA_HOME (or MECHA_SESSION_DIR for sessions)")
		}
	}
	return filepath.Join(home, ".mecha"), nil
}

// SessionDir returns where sessions live: $MECHA_SESSION_DIR, else the
// sessions directory in mecha's home.
func SessionDir(getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if d := getenv("MECHA_SESSION_DIR"); d != "" {
		return filepath.Abs(d)
	}
	home, err := Home(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(home, "sessions"), nil
}

// Providers are the providers mecha can call, sorted: what
// default_provider may name (the harness holds its own list equal to it).
var Providers = []string{"anthropic", "local", "mock", "openai"}

// MaxFileSize bounds config.toml: a larger file is refused unread.
const MaxFileSize = 4 << 20

// Load reads the configuration file at path, and puts its prices over the
// built-in table (Config.Prices). A missing file is an empty
// configuration (a path through a regular file names none either: a home
// under a file); a malformed one is an error naming the file, line and key,
// and one that is not a regular file (a FIFO would block the read) or is
// larger than MaxFileSize is refused.
func Load(path string) (*Config, error) {
	data, err := safeopen.ReadFile(path, MaxFileSize)
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return &Config{merged: new(mergedPrices)}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	c, err := decode(path, data)
	if err != nil {
		return nil, err
	}
	c.merged = new(mergedPrices)
	c.Path = path
	return c, nil
}

// Prices are the prices in effect: the built-in table (pricing.Builtin)
// with config.toml's [prices] over it (pricing.Merge). They are merged at
// the first call, not by Load: reading the built-in table costs about half
// a millisecond, which a command that prices nothing (a tool call, a
// listing) need not pay. Callers must not change the table.
func (c *Config) Prices() pricing.Table {
	if c.merged == nil { // a Config not made by Load
		return pricing.Merge(pricing.Builtin().Table, c.FilePrices)
	}
	c.merged.once.Do(func() { c.merged.table = pricing.Merge(pricing.Builtin().Table, c.FilePrices) })
	return c.merged.table
}

// mergedPrices is Prices once merged, shared by the copies of a Config.
type mergedPrices struct {
	once  sync.Once
	table pricing.Table
}

// decode decodes config.toml's data strictly and checks what it says.
func decode(path string, data []byte) (*Config, error) {
	var c Config
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("config: %s: %s", path, describe(err))
	}
	if err := c.FilePrices.Validate(); err != nil {
		return nil, fmt.Errorf("config: %s: %w", path, err)
	}
	// A default_provider that is not a provider is an error of the file,
	// as an unknown key is, rather than an unknown -p nobody typed.
	if c.DefaultProvider != "" && !slices.Contains(Providers, c.DefaultProvider) {
		return nil, fmt.Errorf("config: %s: default_provider = %q is not a provider (want one of %s)", path, c.DefaultProvider, strings.Join(Providers, ", "))
	}
	for name, r := range c.Remotes {
		if err := r.Check(); err != nil {
			return nil, fmt.Errorf("config: %s: remotes.%s: %w", path, name, err)
		}
	}
	if err := checkTrusted(c.TrustedWorkspaces); err != nil {
		return nil, fmt.Errorf("config: %s: %w", path, err)
	}
	if c.Chat.Notify != "" && !slices.Contains(NotifyModes, c.Chat.Notify) {
		return nil, fmt.Errorf("config: %s: [chat] notify = %q is not a way to notify (want one of %s)", path, c.Chat.Notify, strings.Join(NotifyModes, ", "))
	}
	return &c, nil
}

// describe turns a go-toml error into one line with its position.
func describe(err error) string {
	var sm *toml.StrictMissingError
	if errors.As(err, &sm) && len(sm.Errors) > 0 {
		var keys []string
		first := sm.Errors[0]
		for _, e := range sm.Errors {
			keys = append(keys, strings.Join(e.Key(), "."))
		}
		row, _ := first.Position()
		return fmt.Sprintf("line %d: unknown key %s", row, strings.Join(keys, ", "))
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, col := de.Position()
		msg := clipQuoted(de.Error(), 40)
		if k := de.Key(); len(k) > 0 {
			return fmt.Sprintf("line %d column %d: %s: %s%s", row, col, strings.Join(k, "."), msg, hint(k))
		}
		return fmt.Sprintf("line %d column %d: %s", row, col, msg)
	}
	return err.Error()
}

// hint is what to write instead of a table at key, when there is one to
// say: [mcp.servers.NAME.tools.TOOL] reads like per-tool settings, but
// tools is the list of tools offered.
func hint(key []string) string {
	if len(key) > 4 && key[0] == "mcp" && key[1] == "servers" && key[3] == "tools" {
		return " (per-tool capabilities go in [mcp.servers.NAME.tool_capabilities] as TOOL = [...])"
	}
	return ""
}

// clipQuoted clips each double-quoted part of msg to n runes: go-toml
// quotes the literal it could not parse, which may be a number of
// hundreds of digits, ahead of the reason.
func clipQuoted(msg string, n int) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(msg, '"')
		if i < 0 {
			break
		}
		j := strings.IndexByte(msg[i+1:], '"')
		if j < 0 {
			break
		}
		b.WriteString(msg[:i+1])
		b.WriteString(textfmt.Clip(msg[i+1:i+1+j], n))
		b.WriteByte('"')
		msg = msg[i+1+j+1:]
	}
	b.WriteString(msg)
	return b.String()
}

// Timeouts returns the timeouts configured for a provider: each key, else
// request_timeout, else zero.
func (c *Config) Timeouts(provider string) Timeouts {
	if c == nil {
		return Timeouts{}
	}
	p := c.Providers[provider]
	pick := func(d Duration) time.Duration {
		if d.Duration != 0 {
			return d.Duration
		}
		return p.RequestTimeout.Duration
	}
	return Timeouts{Connect: pick(p.ConnectTimeout), FirstByte: pick(p.FirstByteTimeout), Idle: pick(p.IdleTimeout)}
}

// Model returns the configured default model of a provider, "" if none.
func (c *Config) Model(provider string) string {
	if c == nil {
		return ""
	}
	return c.Providers[provider].Model
}

// Check tells a remote's table that cannot be used: a url that is not
// s3://BUCKET[/PREFIX], an endpoint that is not an http(s) URL, or one that
// carries a user or password (credentials come from the AWS variables and
// files, never from config.toml).
func (r Remote) Check() error {
	rest, ok := strings.CutPrefix(r.URL, "s3://")
	bucket, _, _ := strings.Cut(rest, "/")
	if !ok || bucket == "" {
		return fmt.Errorf("url = %q is not s3://BUCKET[/PREFIX]", textfmt.Clip(r.URL, 80))
	}
	if r.Endpoint != "" {
		u, err := url.Parse(r.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("endpoint is not an http:// or https:// URL")
		}
		if u.User != nil {
			return fmt.Errorf("endpoint holds a user or password: credentials come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or ~/.aws/credentials, never config.toml")
		}
	}
	return nil
}
