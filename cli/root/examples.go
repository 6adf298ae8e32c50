package root

import "github.com/spf13/cobra"

// examples are the Examples of each command's help, by command path:
// real command lines (TestEveryCommandHasExamples parses each one). A
// command that sets its own Example keeps it.
var examples = map[string]string{
	"mecha": `  mecha run "what does this repository do?"
  mecha sessions list
  mecha replay last -p local
  mecha doctor`,
	"mecha chat": `  mecha chat
  mecha chat -c
  mecha chat --resume 20260805T091500 -p anthropic
  mecha chat -p local --read-only "what does this repository do?"`,
	"mecha run": `  mecha run "list the TODOs in this repository"
  mecha run -p anthropic -m claude-sonnet-4-5 --yes "fix the failing test"
  mecha run -p local --seed 42 --temperature 0 --tool fs_read --tool fs_list "summarize README.md"
  mecha run --resume last "now write the summary to NOTES.md"
  mecha run --read-only --max-cost-usd 0.50 --json "review the last commit"`,
	"mecha replay": `  mecha replay last
  mecha replay 20260805T091500 -p local --repeat 5
  mecha replay last --on-divergence error --json
  mecha replay last --on-divergence live --read-only`,
	"mecha regress": `  mecha regress -p local
  mecha regress 20260805T091500-3f2a1b7c --skip-slot-check
  mecha regress --shard 1/4 --junit report.xml
  mecha regress --remote team --shard 2/4 --run nightly-42`,
	"mecha regress pin": `  mecha regress pin 20260805T091500-3f2a1b7c --remote team`,
	"mecha regress report": `  mecha regress report --remote team --run nightly-42 --junit report.xml
  mecha regress report --remote team --run nightly-42 --json`,
	"mecha sessions push": `  mecha sessions push --all
  mecha sessions push last --remote team
  mecha sessions push --since 7d --json`,
	"mecha sessions pull": `  mecha sessions pull --all
  mecha sessions pull 20260805T091500 --remote team`,
	"mecha sessions share": `  mecha sessions share last --dry-run
  mecha sessions share 20260805T091500 --expires 24h
  mecha sessions share last --remote team --include-private`,
	"mecha rerun": `  mecha rerun last
  mecha rerun last --diff --ignore '[0-9]{4}-[0-9]{2}-[0-9]{2}'
  mecha rerun 20260805T091500 -w /tmp/copy --yes --json`,
	"mecha script": `  mecha script last
  mecha script last -o - | less
  mecha script 20260805T091500 -o redo.sh --json`,
	"mecha import": `  mecha import claude-code --all --dry-run
  mecha import claude-code ~/.claude/projects/-home-you-project/5f1c0a3e.jsonl
  mecha import codex --all --json`,
	"mecha reflect": `  mecha reflect last
  mecha reflect 20260805T091500 -p anthropic -m claude-sonnet-4-5`,
	"mecha distill": `  mecha distill
  mecha distill --days 7 --json`,
	"mecha learn": `  mecha learn --dry-run
  mecha learn --days 14 --yes
  mecha learn --list
  mecha learn --forget 3`,
	"mecha sessions": `  mecha sessions list -n 10
  mecha sessions show last
  mecha sessions search "connection refused"`,
	"mecha sessions view": `  mecha sessions view last --open
  mecha sessions view 20260805T091500 -o page.html`,
	"mecha sessions export": `  mecha sessions export last --format md -o session.md
  mecha sessions export 20260805T091500 --format json -o session.json
  mecha sessions export last -o page.html`,
	"mecha sessions list": `  mecha sessions list
  mecha sessions list -n 5
  mecha sessions list --json | jq -r '.[].id'
  mecha sessions list --remote team -n 20`,
	"mecha sessions show": `  mecha sessions show last
  mecha sessions show 20260805T091500 --full
  mecha sessions show last --json | jq .usage`,
	"mecha sessions path": `  mecha sessions path last
  less "$(mecha sessions path 20260805T091500)"`,
	"mecha sessions stats": `  mecha sessions stats
  mecha sessions stats --days 7 --json`,
	"mecha sessions search": `  mecha sessions search "permission denied"
  mecha sessions search --tool shell --days 30 "go test"
  mecha sessions search --regex --role assistant 'TODO|FIXME' -n 20`,
	"mecha sessions rm": `  mecha sessions rm 20260805T091500-3f2a1b7c
  mecha sessions rm -y last`,
	"mecha sessions prune": `  mecha sessions prune --older-than 90d --dry-run
  mecha sessions prune --older-than 30d -y`,
	"mecha tool": `  mecha tool list
  mecha tool call fs_read '{"path": "README.md"}'`,
	"mecha tool list": `  mecha tool list
  mecha tool list --json --no-mcp`,
	"mecha tool call": `  mecha tool call fs_list '{"path": "."}'
  echo '{"command": "go test ./..."}' | mecha tool call shell - --yes
  mecha tool call mcp__fs__read_file '{"path": "go.mod"}' --mcp-name fs --mcp-command npx --mcp-arg -y --mcp-arg @modelcontextprotocol/server-filesystem --mcp-arg .`,
	"mecha mcp": `  mecha mcp list
  mecha mcp serve --read-only`,
	"mecha mcp list": `  mecha mcp list
  mecha mcp list --mcp-config .mcp.json --json`,
	"mecha mcp call": `  mecha mcp call fs read_file '{"path": "go.mod"}'
  mecha mcp call web fetch '{"url": "http://127.0.0.1:8000"}' --url http://127.0.0.1:9000/mcp`,
	"mecha mcp serve": `  mecha mcp serve --read-only
  mecha mcp serve -w ~/project --tool fs_read --tool fs_list --http 127.0.0.1:8765
  mecha mcp serve --read-only --http 0.0.0.0:8765 --allow-remote --token-file ~/.mecha/mcp-token`,
	"mecha mcp proxy": `  mecha mcp proxy --name fs -- npx -y @modelcontextprotocol/server-filesystem .
  mecha mcp proxy --url http://127.0.0.1:9000/mcp --http 127.0.0.1:8766`,
}

// addExamples gives each command of the tree its example, where it has
// none of its own.
func addExamples(cmd *cobra.Command) {
	if cmd.Example == "" {
		cmd.Example = examples[cmd.CommandPath()]
	}
	for _, c := range cmd.Commands() {
		addExamples(c)
	}
}
