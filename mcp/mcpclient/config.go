package mcpclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/internal/safeopen"
)

// Transports a server is reached over.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http" // streamable HTTP
	TransportSSE   = "sse"  // the older HTTP+SSE transport
)

// Defaults of a ServerConfig's zero timeouts.
const (
	DefaultStartupTimeout = 30 * time.Second
	DefaultToolTimeout    = 600 * time.Second
)

// ServerConfig is one configured MCP server. Strings may hold ${VAR}
// references (Command, Args, Env and Headers values, URL); they are
// expanded when the server is connected and recorded unexpanded.
type ServerConfig struct {
	// Name is the server's name in mecha's configuration; its tools are
	// offered as mcp__<Name>__<tool>.
	Name string
	// Transport is TransportStdio (Command, Args, Env) or TransportHTTP or
	// TransportSSE (URL, Headers). Empty: stdio when Command is set, else
	// http.
	Transport string
	Command   string
	Args      []string
	// Env is added to the server's environment.
	Env     map[string]string
	URL     string
	Headers map[string]string
	// Disabled servers are listed but never started.
	Disabled bool
	// Tools, when not nil, offers only these of the server's tools (its
	// own names).
	Tools []string
	// Capabilities, when not nil, narrows what the server's tools declare;
	// nil declares every capability.
	Capabilities *tool.Capabilities
	// ToolCapabilities are what single tools declare, by the server's own
	// name for each: an entry replaces Capabilities for its tool (a mail
	// server's reader brings outside text, its sender reaches the
	// network, its folder list does neither).
	ToolCapabilities map[string]tool.Capabilities
	// TrustAnnotations believes the tools' readOnlyHint and openWorldHint.
	TrustAnnotations bool
	// StartupTimeout bounds starting, initialising and listing tools;
	// ToolTimeout bounds one call. Zero: the defaults.
	StartupTimeout time.Duration
	ToolTimeout    time.Duration
	// Source says where the server was configured, for messages.
	Source string
}

// Kind returns the transport, with the default filled in.
func (c ServerConfig) Kind() string {
	switch {
	case c.Transport != "":
		return c.Transport
	case c.Command != "":
		return TransportStdio
	}
	return TransportHTTP
}

// Validate checks a configuration before anything is started.
func (c ServerConfig) Validate() error {
	where := fmt.Sprintf("mcp: server %q", c.Name)
	if c.Source != "" {
		where += " (" + c.Source + ")"
	}
	switch {
	case c.Name == "":
		return fmt.Errorf("mcp: a server has no name (%s)", c.Source)
	case c.Command != "" && c.URL != "":
		return fmt.Errorf("%s: give a command or a url, not both", where)
	case c.Command == "" && c.URL == "":
		return fmt.Errorf("%s: give a command or a url", where)
	case c.StartupTimeout < 0 || c.ToolTimeout < 0:
		return fmt.Errorf("%s: timeouts must be positive", where)
	}
	if c.Tools != nil {
		for _, n := range slices.Sorted(maps.Keys(c.ToolCapabilities)) {
			if !slices.Contains(c.Tools, n) {
				return fmt.Errorf("%s: tool_capabilities names %q, which tools = [...] does not offer", where, n)
			}
		}
	}
	switch k := c.Kind(); k {
	case TransportStdio:
		if c.Command == "" {
			return fmt.Errorf("%s: a stdio server needs a command", where)
		}
		if len(c.Headers) > 0 {
			return fmt.Errorf("%s: headers apply to a url, not a command", where)
		}
	case TransportHTTP, TransportSSE:
		if c.URL == "" {
			return fmt.Errorf("%s: an %s server needs a url", where, k)
		}
		if len(c.Env) > 0 || len(c.Args) > 0 {
			return fmt.Errorf("%s: args and env apply to a command, not a url", where)
		}
	default:
		return fmt.Errorf("%s: unknown transport %q (want stdio, http or sse)", where, k)
	}
	return nil
}

func (c ServerConfig) startupTimeout() time.Duration {
	if c.StartupTimeout > 0 {
		return c.StartupTimeout
	}
	return DefaultStartupTimeout
}

func (c ServerConfig) toolTimeout() time.Duration {
	if c.ToolTimeout > 0 {
		return c.ToolTimeout
	}
	return DefaultToolTimeout
}

// Capability names, as config.toml's capabilities lists them.
const (
	CapReadsWorkspace    = "reads_workspace"
	CapModifiesWorkspace = "modifies_workspace"
	CapRunsCommands      = "runs_commands"
	CapReachesNetwork    = "reaches_network"
	CapActsOutward       = "acts_outward"
	CapExternal          = "external"
)

// CapabilityNames lists the names ParseCapabilities accepts.
var CapabilityNames = []string{CapReadsWorkspace, CapModifiesWorkspace, CapRunsCommands, CapReachesNetwork, CapActsOutward, CapExternal}

// ParseCapabilities turns a list of capability names into capabilities.
func ParseCapabilities(names []string) (tool.Capabilities, error) {
	var c tool.Capabilities
	for _, n := range names {
		switch n {
		case CapReadsWorkspace:
			c.ReadsWorkspace = true
		case CapModifiesWorkspace:
			c.ModifiesWorkspace = true
		case CapRunsCommands:
			c.RunsCommands = true
		case CapReachesNetwork:
			c.ReachesNetwork = true
		case CapActsOutward:
			c.ActsOutward = true
		case CapExternal:
			c.External = true
		default:
			return c, fmt.Errorf("unknown capability %q (want some of %s)", n, strings.Join(CapabilityNames, ", "))
		}
	}
	return c, nil
}

// ParseToolCapabilities turns tool_capabilities (a list of capability
// names for each tool, by the server's name for it) into capabilities. A
// nil map is nil.
func ParseToolCapabilities(m map[string][]string) (map[string]tool.Capabilities, error) {
	if m == nil {
		return nil, nil
	}
	out := make(map[string]tool.Capabilities, len(m))
	for _, n := range slices.Sorted(maps.Keys(m)) {
		c, err := ParseCapabilities(m[n])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		out[n] = c
	}
	return out, nil
}

// CapabilityList names the capabilities c declares, in CapabilityNames order.
func CapabilityList(c tool.Capabilities) []string {
	out := []string{}
	for _, p := range []struct {
		on   bool
		name string
	}{{c.ReadsWorkspace, CapReadsWorkspace}, {c.ModifiesWorkspace, CapModifiesWorkspace},
		{c.RunsCommands, CapRunsCommands}, {c.ReachesNetwork, CapReachesNetwork}, {c.ActsOutward, CapActsOutward}, {c.External, CapExternal}} {
		if p.on {
			out = append(out, p.name)
		}
	}
	return out
}

// mcpJSON is the .mcp.json format Claude Code, Cursor and others share.
// Fields this build does not know are ignored, so a file written for
// another client is read as it is; a server's "mecha" object is mecha's
// own, read strictly (see mechaJSON).
type mcpJSON struct {
	MCPServers map[string]struct {
		Type    string            `json:"type"`
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
		Mecha   json.RawMessage   `json:"mecha"`
	} `json:"mcpServers"`
}

// mechaJSON is a server's "mecha" object in a .mcp.json: what config.toml's
// capabilities and tool_capabilities say of a server, under a key other
// clients ignore. Unknown keys in it are errors, as in config.toml.
//
//	"mail": {"command": "mail-mcp", "mecha": {"capabilities": [],
//	  "tool_capabilities": {"read_inbox": ["reads_workspace", "external"],
//	                        "send_email": ["reaches_network"]}}}
type mechaJSON struct {
	Capabilities     []string            `json:"capabilities"`
	ToolCapabilities map[string][]string `json:"tool_capabilities"`
}

// apply applies a server's "mecha" object to c.
func (m *mechaJSON) apply(c *ServerConfig, raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(m); err != nil {
		return fmt.Errorf("\"mecha\": %v", err)
	}
	if m.Capabilities != nil {
		caps, err := ParseCapabilities(m.Capabilities)
		if err != nil {
			return fmt.Errorf("\"mecha\".capabilities: %w", err)
		}
		c.Capabilities = &caps
	}
	tc, err := ParseToolCapabilities(m.ToolCapabilities)
	if err != nil {
		return fmt.Errorf("\"mecha\".tool_capabilities: %w", err)
	}
	c.ToolCapabilities = tc
	return nil
}

// LoadFile reads the servers of a .mcp.json file, sorted by name.
func LoadFile(path string) ([]ServerConfig, error) {
	// Only a regular file, read without blocking and bounded: a FIFO or
	// /dev/zero given as --mcp-config must not hang or fill memory.
	data, err := safeopen.ReadFile(path, 4<<20)
	if err != nil {
		return nil, fmt.Errorf("mcp: %w", err)
	}
	var f mcpJSON
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&f); err != nil {
		return nil, fmt.Errorf("mcp: %s: %v", path, err)
	}
	if f.MCPServers == nil {
		return nil, fmt.Errorf("mcp: %s: no \"mcpServers\" object", path)
	}
	var out []ServerConfig
	for name, s := range f.MCPServers {
		c := ServerConfig{Name: name, Command: s.Command, Args: s.Args, Env: s.Env, URL: s.URL, Headers: s.Headers, Source: path}
		switch s.Type {
		case "", TransportStdio:
		case "http", "streamable-http", "streamableHttp":
			c.Transport = TransportHTTP
		case TransportSSE:
			c.Transport = TransportSSE
		default:
			return nil, fmt.Errorf("mcp: %s: server %q: unknown type %q (want stdio, http or sse)", path, name, s.Type)
		}
		if s.Type == TransportStdio {
			c.Transport = TransportStdio
		}
		if err := new(mechaJSON).apply(&c, s.Mecha); err != nil {
			return nil, fmt.Errorf("mcp: %s: server %q: %v", path, name, err)
		}
		if err := c.Validate(); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Merge joins lists of servers from several sources in order. A name
// defined twice is an error naming both places.
func Merge(lists ...[]ServerConfig) ([]ServerConfig, error) {
	var out []ServerConfig
	for _, l := range lists {
		for _, c := range l {
			if i := slices.IndexFunc(out, func(o ServerConfig) bool { return o.Name == c.Name }); i >= 0 {
				return nil, fmt.Errorf("mcp: server %q is configured twice: in %s and in %s", c.Name, out[i].Source, c.Source)
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// expand replaces each ${VAR} in s by the variable's value. A variable that
// is not set is an error naming it: a header of "Bearer " is worse than a
// server that does not start.
func expand(s string, getenv func(string) string) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return "", errors.New("unterminated ${ in " + strings.TrimSpace(s[:min(len(s), i+20)]))
		}
		name := s[i+2 : i+j]
		v := ""
		if getenv != nil {
			v = getenv(name)
		}
		if v == "" {
			return "", fmt.Errorf("${%s} is not set", name)
		}
		b.WriteString(s[:i])
		b.WriteString(v)
		s = s[i+j+1:]
	}
}

func expandMap(m map[string]string, getenv func(string) string) (map[string]string, error) {
	out := make(map[string]string, len(m))
	for k, v := range m {
		e, err := expand(v, getenv)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = e
	}
	return out, nil
}
