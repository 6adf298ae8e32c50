#!/usr/bin/env bash
# Replays every session pinned in $MECHA_HOME/regression-sessions.txt
# (default ~/.mecha/regression-sessions.txt), or just the ids given, against
# the current build and the llama-server at $MECHA_LOCAL_URL (default
# http://127.0.0.1:8080), and fails on any divergence.
#
#   scripts/replay-regression.sh              # every pinned session
#   scripts/replay-regression.sh ID [ID ...]  # just these
#
# It refuses to run unless the server has exactly one slot (llama-server
# -np 1): seeded replay only repeats sequentially on a single slot.
# MECHA_BIN names a mecha binary to use instead of building this checkout.
# Extra flags for mecha regress (--junit FILE, --shard I/N, --json) may
# follow the ids.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bin=${MECHA_BIN:-}
if [ -z "$bin" ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	(cd "$root" && go build -o "$tmp/mecha" ./cmd/mecha)
	bin=$tmp/mecha
fi

# mecha regress checks GET /props for total_slots == 1 before replaying
# anything against the local provider, and exits non-zero on any divergence.
exec "$bin" regress -p local --on-divergence=error "$@"
