#!/usr/bin/env bash
# mecha's trifecta interlock on AgentDojo: see bench/agentdojo/README.md.
#
#   bench/agentdojo/run.sh [--suite S]... [--attack A] [--trifecta refuse|ask|off]...
#                          [--limit N] [--out DIR] [--json] [--doc]
#   bench/agentdojo/run.sh --setup
#
# Runs every case of the chosen suites (default: all four) through mecha,
# under each --trifecta mode given (default: refuse, then off as the
# control), and prints per suite and overall the benign utility, the
# utility under attack and the attack success rate, the benign tasks the
# interlock blocked (the call refused and why) and every attack that
# succeeded. --json prints that as JSON (one object for one mode, a list for
# more). --doc rewrites the attack's table in SECURITY.md from this run.
# --limit N runs only the first N user tasks and N injection tasks of each
# suite. Every case is a session in DIR/home: MECHA_HOME=DIR/home mecha
# sessions show ID.
#
# It makes its own Python environment (agentdojo and the MCP SDK, pinned in
# requirements.txt) under $MECHA_AGENTDOJO_CACHE (default
# ~/.cache/mecha/agentdojo), from the Python package index, once; it builds
# mecha from this checkout unless $MECHA names a binary. --setup makes that
# environment and stops (CI does it before the tests, outside a test's
# timeout).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

usage() { sed -n '4,7p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
args=() json=0 doc=0 out="" modes=0 attack=important_instructions setup=0
while [ $# -gt 0 ]; do
	case "$1" in
	--suite | --trifecta | --limit)
		[ $# -ge 2 ] || { echo "run.sh: $1 needs a value" >&2; exit 2; }
		[ "$1" = --trifecta ] && modes=1
		args+=("$1" "$2"); shift 2 ;;
	--attack)
		[ $# -ge 2 ] || { echo "run.sh: $1 needs a value" >&2; exit 2; }
		attack=$2; args+=("$1" "$2"); shift 2 ;;
	--out)
		[ $# -ge 2 ] || { echo "run.sh: $1 needs a value" >&2; exit 2; }
		out=$2; shift 2 ;;
	--json) json=1; shift ;;
	--doc) doc=1; shift ;;
	--setup) setup=1; shift ;;
	-h | --help) usage ;;
	*) echo "run.sh: unknown argument $1" >&2; usage ;;
	esac
done

python=""
for p in python3.12 python3.11 python3.10 python3; do
	if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
		python=$p; break
	fi
done
[ -n "$python" ] || { echo "run.sh: no Python 3.10 or later (agentdojo needs it)" >&2; exit 3; }

cache=${MECHA_AGENTDOJO_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mecha/agentdojo}
sum=$(cat "$here/requirements.txt" | sha256sum | cut -c1-12)
venv=$cache/venv-$sum
if [ ! -f "$venv/.complete" ]; then
	echo "run.sh: making the Python environment in $venv (once)" >&2
	rm -rf "$venv"
	mkdir -p "$cache"
	"$python" -m venv "$venv" >&2
	"$venv/bin/pip" install -q --disable-pip-version-check -r "$here/requirements.txt" >&2 ||
		{ echo "run.sh: pip could not install $here/requirements.txt (is the Python package index reachable?)" >&2; exit 3; }
	touch "$venv/.complete"
fi
[ $setup = 0 ] || { echo "run.sh: the Python environment is ready in $venv" >&2; exit 0; }

mecha=${MECHA:-}
if [ -z "$mecha" ]; then
	mecha=$cache/mecha
	(cd "$root" && go build -o "$mecha" ./cmd/mecha) || { echo "run.sh: could not build mecha" >&2; exit 3; }
fi

if [ -z "$out" ]; then
	out=$here/runs/$(date -u +%Y%m%dT%H%M%SZ)-$attack
fi
[ $modes = 1 ] || args+=(--trifecta refuse --trifecta off)

"$venv/bin/python" "$here/dojo.py" run --out "$out" --mecha "$mecha" "${args[@]}"
if [ $json = 1 ]; then
	"$venv/bin/python" "$here/dojo.py" report "$out" --json
else
	"$venv/bin/python" "$here/dojo.py" report "$out"
fi
if [ $doc = 1 ]; then
	"$venv/bin/python" "$here/dojo.py" doc "$out" "$root/SECURITY.md"
fi
