// Package configcmd holds "mecha config": where config.toml is, and the
// configuration mecha runs with (built-in defaults, config.toml and the
// environment), with every secret left out.
package configcmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pelletier/go-toml/v2"
	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/cli/cmdkit"
)

// NewCmdConfig builds "mecha config" and its subcommands.
func NewCmdConfig(env *cmdkit.Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show where config.toml is and the configuration mecha runs with",
		Long: `mecha reads its settings from $MECHA_HOME/config.toml (default
~/.mecha/config.toml) and from the environment. "config path" prints where the
file is; "config show" prints every setting as mecha would use it, secrets
left out: API keys are only said to be set or not, and the env values and
headers of MCP servers, passwords and query values in URLs, and values of
credential-like arguments are replaced by <redacted>.

config.toml is decoded strictly: a key mecha does not know is an error naming
it and its line. Its keys:

  default_provider = "anthropic"   the provider used without -p (else mock)
  reflect = true                   reflect on each run when it closes (--reflect)
  subagents = true                 offer the agent tool beside every tool
                                   when --tool is not given
  trusted_workspaces = ["/src"]    directories whose files are yours, each
                                   with those beneath it (mecha trust edits it)

  [providers.anthropic]            also openai, local, mock
  model = "claude-opus-4-1"        the model used without -m
  connect_timeout = "30s"          making the connection (DNS, TCP, TLS)
  first_byte_timeout = "10m"       once connected, the wait for the first
                                   part of the answer (the model reading)
  idle_timeout = "5m"              the wait for each further part
  request_timeout = "2m"           all three at once (no default); each
                                   key above, when set, wins over it

  [prices.anthropic."claude-opus-4-1"]   USD per million tokens
  input = 15.0
  output = 75.0
  cache_read = 1.5                 optional, as is cache_write: when unset,
                                   cache tokens cost the input price
  cache_write = 18.75

  [prices.local."*"]               "*" prices every model of the provider
  input = 0
  output = 0

  [mcp.servers.NAME]               MCP servers: see "mecha mcp --help"

  [mcp.servers.NAME.tool_capabilities]
  read_inbox = ["reads_workspace", "external"]
  send_email = ["reaches_network", "acts_outward"]
  list_folders = []                what single tools of server NAME declare,
                                   by the server's names for them; an entry
                                   wins over the server's capabilities. A
                                   table of its own, not
                                   [mcp.servers.NAME.tools.TOOL]: TOML cannot
                                   hold tools both as the list of tools
                                   offered and as a table

  [permissions]                    saved permission rules, for every workspace
  allow = ["shell(go test ./...)", "shell(git status*)", "fs_write(docs/**)"]
                                   calls that run without asking (the ask
                                   mode; --read-only still refuses them)
  deny = ["shell(rm *)", "fs_read(**/.env)", "web_fetch"]
                                   calls never run, whatever the mode, an
                                   allow rule or an answer: deny wins; a
                                   workspace's own .mecha/permissions.toml
                                   (allow = [...], deny = [...]) may deny
                                   calls, and allow them once the workspace
                                   is trusted (trusted_workspaces above)

  [web_fetch]
  refuse_private = true            web_fetch refuses private addresses too:
                                   loopback, 10/8, 172.16/12, 192.168/16,
                                   100.64/10, fc00::/7 (off by default: local
                                   servers are normal targets; link-local and
                                   cloud-metadata addresses are refused either
                                   way, see SECURITY.md)

  [trifecta]
  trusted_hosts = ["docs.python.org", "*.corp.example"]
                                   hosts a call that reaches the network may
                                   reach after untrusted content came in,
                                   though no prompt named them (exact names,
                                   www. and case aside, or *.host for its
                                   subdomains; [sandbox] allow_domains are
                                   trusted too; see SECURITY.md)

  [chat]
  notify = "bell"                  how mecha chat calls you when a permission
                                   question waits or a run ends while its
                                   window is not focused: "bell" (default),
                                   "osc9" or "osc777" (a desktop
                                   notification, for terminals that take
                                   them), or "off"

  [remotes.team]                   a team's store on S3-compatible storage:
  url = "s3://mecha-team/sessions" bucket and prefix ("mecha sessions push
  endpoint = "http://host:7070"    --help"); endpoint for a server other than
  region = "us-east-1"             AWS, path_style to name the bucket in the
  path_style = true                path. Keys come from AWS_ACCESS_KEY_ID and
                                   AWS_SECRET_ACCESS_KEY, else the profile
                                   AWS_PROFILE of ~/.aws/credentials; "config
                                   show" says whether they are set, never them

  [sandbox]
  read_deny = ["~/secrets"]        paths the confined shell may not read, on
                                   top of the defaults: $MECHA_HOME, ~/.ssh,
                                   ~/.aws, ~/.config/gcloud, ~/.azure,
                                   ~/.kube, ~/.docker/config.json, ~/.netrc,
                                   ~/.git-credentials, ~/.npmrc, ~/.pypirc,
                                   ~/.gnupg, shell histories, other users'
                                   homes (absolute or ~/...)
  read_allow = ["~/.npmrc"]        lifts the denied paths equal to or under
                                   each (the session's config record lists
                                   what was denied)
  allow_domains = ["pypi.org", "*.npmjs.org"]
                                   hosts the confined shell may reach
                                   through mecha's HTTP proxy, the network
                                   otherwise cut (with --allow-domain)
  send_domains = ["api.example.com"]
                                   allowed hosts able to receive data: with
                                   one, the shell counts as able to send
                                   data out (see SECURITY.md)

A rule is a tool's name (all its calls; mcp__SERVER: all of a server's
tools) or TOOL(PATTERN): a shell command or a web_fetch URL matched whole,
* standing for any text; a file tool's path, relative to the workspace,
as a glob (* within a directory, ** across; a path reaching elsewhere
through a link must match too). An allow rule never matches a shell
command holding ; & | < > ` + "`" + ` $ ( ) or a line break: those are asked
about. A repository is someone else's text, so the allow rules of its
.mecha/permissions.toml hold only once the workspace is trusted
(mecha trust; a note says they were ignored). The chat's prompt offers [r] to always allow
a command or a file write here: the rule is saved for the workspace in
$MECHA_HOME/permissions.toml, a file of yours like this one. Each attach's
config record lists the rules it applied (permission_rules).

The three timeouts shown are their defaults. Durations are strings with a
unit. Only a part of the answer counts as progress: response headers, SSE
comments and Anthropic's ping events do not, so a server that sends nothing
else times out. A timeout fails the request with one line
naming the provider, the URL and the timeout, and is retried like a
dropped connection; --request-timeout overrides every timeout for one
command. Timeouts do not shape a request, so no session records them.

Transcripts record tokens, never prices: "sessions show" and "sessions
stats" price usage at today's table. mecha carries a dated table of
Anthropic's and OpenAI's list prices, with local and mock models at 0
("mecha doctor" says its date, and warns once it is 120 days old);
[prices] here wins over it model by model, and a provider's "*" replaces
all of that provider's models in it. A price is a number from 0 to
1000000; a model with no price shows — (null in JSON), never $0.00.

The environment: MECHA_HOME (mecha's home, default ~/.mecha),
MECHA_SESSION_DIR (the session store, default $MECHA_HOME/sessions),
ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL, OPENAI_API_KEY and
OPENAI_BASE_URL, and MECHA_LOCAL_URL (the local provider's server:
llama-server, Ollama or any OpenAI-compatible one; default
http://127.0.0.1:8080). The local provider's model is "local" unless -m or
[providers.local] model names one; llama-server serves whatever it loaded,
Ollama needs the name. MECHA_MCP_TOKEN is the bearer token "mecha mcp serve"
and "mecha mcp proxy" require over --http (see their help).`,
		Example: `  mecha config path
  $EDITOR "$(mecha config path)"
  mecha config show
  mecha config show --json`,
		Args: cmdkit.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(NewCmdPath(env, nil), NewCmdShow(env, nil))
	return cmd
}

// PathOptions are the options of "config path".
type PathOptions struct {
	Env *cmdkit.Env
}

// NewCmdPath builds "mecha config path".
func NewCmdPath(env *cmdkit.Env, runF func(*PathOptions) error) *cobra.Command {
	opts := &PathOptions{Env: env}
	return &cobra.Command{
		Use:   "path",
		Short: "Print the path of config.toml, whether or not it exists",
		Long: `Print the path mecha reads config.toml from. When there is no file there, a
note on stderr says so (mecha then runs on its defaults); the exit status is
0 either way.`,
		Example: `  mecha config path
  MECHA_HOME=/tmp/mecha mecha config path`,
		Args: cmdkit.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return pathRun(opts)
		},
	}
}

func pathRun(opts *PathOptions) error {
	p, err := configPath(opts.Env)
	if err != nil {
		return err
	}
	fmt.Fprintln(opts.Env.Out, p)
	if _, err := os.Stat(p); err != nil {
		fmt.Fprintf(opts.Env.Err, "note: %s does not exist: mecha runs on its defaults\n", p)
	}
	return nil
}

// configPath is where config.toml is read from.
func configPath(env *cmdkit.Env) (string, error) {
	home, err := env.Home()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, "config.toml"), nil
}

// ShowOptions are the options of "config show".
type ShowOptions struct {
	Env  *cmdkit.Env
	JSON bool
}

// NewCmdShow builds "mecha config show".
func NewCmdShow(env *cmdkit.Env, runF func(*ShowOptions) error) *cobra.Command {
	opts := &ShowOptions{Env: env}
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Print the effective configuration as TOML (or JSON), secrets left out",
		Long: `Print the configuration mecha runs with: its home, the session store, the
default provider, each provider's model, address and timeouts, whether its API
key is set, prices, and the MCP servers with their effective timeouts. Built-in
defaults are merged with config.toml and the environment. No secret is
printed: keys show as "set" or "not set", and MCP servers' env values and
headers, URL passwords and query values, and the values of arguments named
like a credential (--token, --api-key=...) as <redacted>.

A config.toml that does not parse is an error (exit 1) naming the line.`,
		Example: `  mecha config show
  mecha config show --json | jq .providers.anthropic`,
		Args: cmdkit.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return showRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the configuration as JSON")
	return cmd
}

func showRun(opts *ShowOptions) error {
	cfg, err := opts.Env.Config()
	if err != nil {
		return err
	}
	eff, err := Build(opts.Env, cfg)
	if err != nil {
		return err
	}
	if opts.JSON {
		enc := json.NewEncoder(opts.Env.Out)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(eff)
	}
	b, err := toml.Marshal(eff)
	if err != nil {
		return err
	}
	fmt.Fprintln(opts.Env.Out, "# mecha's effective configuration: built-in defaults, config.toml, the environment.")
	fmt.Fprintln(opts.Env.Out, "# Secrets are not shown.")
	_, err = opts.Env.Out.Write(b)
	return err
}
