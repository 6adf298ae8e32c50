#!/usr/bin/env bash
# Times `mecha regress --repeat K` against K separate `mecha regress` runs
# of the same pins, both against the built-in mock (no model time: what is
# left is the harness's), warm cache:
#
#   scripts/repeat-vs-runs.sh          # this checkout, 3 pins, K=4, 7 rounds
#   PINS=10 K=8 ROUNDS=9 scripts/repeat-vs-runs.sh
#
# Each round runs both once, in an order that rotates from round to round;
# one untimed round first. It prints the median wall time of each and
# their ratio. Nothing is recorded (--no-session), so the store does not
# grow between rounds.
set -euo pipefail

rounds=${ROUNDS:-7}
pins=${PINS:-3}
repeat=${K:-4}
# shellcheck source=scripts/bench-lib.sh
source "$(dirname "$0")/bench-lib.sh"
bin=${bins[0]}

export MECHA_HOME="$tmp/home" MECHA_SESSION_DIR="$tmp/sessions"
mkdir -p "$tmp/ws" "$MECHA_SESSION_DIR"
echo hello >"$tmp/ws/a.txt"
cat >"$tmp/turns.json" <<'JSON'
{"turns": [
 {"tool_calls": [{"name": "fs_read", "input": {"path": "a.txt"}}]},
 {"text": "a says hello"}
]}
JSON
for ((i = 0; i < pins; i++)); do
	(cd "$tmp/ws" && "$bin" run -p mock --mock-script "$tmp/turns.json" --tool fs_read "read a ($i)" >/dev/null 2>&1)
done
"$bin" sessions list --json | grep -o '"id":"[^"]*"' | cut -d'"' -f4 >"$tmp/pins.txt"

run() { # run INDEX DIR: 0 is K separate runs, 1 is --repeat K
	if [ "$1" -eq 0 ]; then
		for ((j = 0; j < repeat; j++)); do
			"$bin" regress --no-session --pins "$tmp/pins.txt" --mock-script "$tmp/turns.json" >/dev/null
		done
	else
		"$bin" regress --no-session --pins "$tmp/pins.txt" --mock-script "$tmp/turns.json" --repeat "$repeat" >/dev/null
	fi
}

echo "== $pins pins, K=$repeat, $rounds rounds"
rotate "$tmp" 2
base=$(median <"$tmp/times.0")
rep=$(median <"$tmp/times.1")
awk -v b="$base" -v r="$rep" -v k="$repeat" 'BEGIN {
	printf "%d separate runs   median %8.1f ms\n", k, b / 1e6
	printf "--repeat %d        median %8.1f ms  %5.2fx the separate runs\n", k, r / 1e6, r / b
}'
