#!/usr/bin/env bash
# Times `mecha sessions list` against `head -qn1` over the same files, on
# the stores docs/PERFORMANCE.md quotes for listing, warm cache:
#
#    1,000 sessions x 1 KB      1,000 sessions x 1 MB      10,000 sessions x 8 KB
#
# each written twice: with session_turns in the summaries (listing reads the
# last line: "tail") and without, as before the field (each file read
# whole: "full").
#
#   scripts/list-vs-head.sh                 # this checkout, 7 rounds
#   scripts/list-vs-head.sh BIN [BIN ...]   # these mecha binaries, side by side
#
# Each round runs head and every binary once, in an order that rotates from
# round to round, so the drift of a shared machine weighs on all alike; one
# untimed round first warms the page cache. It prints the median wall time
# of each (process start-up included) and its ratio to head's median.
# ROUNDS=N changes the number of rounds. The stores (about 2.2 GB) are
# written under a temporary directory (TMPDIR) and removed at exit.
set -euo pipefail

rounds=${ROUNDS:-7}
# shellcheck source=scripts/bench-lib.sh
source "$(dirname "$0")/bench-lib.sh"

run() { # run INDEX DIR: 0 is head, i > 0 is bins[i-1]
	if [ "$1" -eq 0 ]; then
		head -qn1 "$2"/*.jsonl >/dev/null
	else
		MECHA_HOME="$tmp/home" MECHA_SESSION_DIR="$2" "${bins[$1 - 1]}" sessions list >/dev/null
	fi
}

names=("head -qn1" "${bins[@]}")
for shape in "1000 1024" "1000 1048576" "10000 8192"; do
	for total in 1 0; do
		read -r n size <<<"$shape"
		dir="$tmp/store-$n-$size-$total"
		MECHA_SESSION_TEST_CHILD=write-store MECHA_STORE_DIR="$dir" MECHA_STORE_N="$n" \
			MECHA_STORE_SIZE="$size" MECHA_STORE_LINE=65536 MECHA_STORE_TOTAL="$total" "$tmp/session.test"
		what=full
		[ "$total" = 1 ] && what=tail
		echo "== $n sessions x $((size / 1024)) KB, $what ($(du -sh "$dir" | cut -f1)), $rounds rounds"
		indexed "$dir"
		rotate "$dir" ${#names[@]}
		base=$(median <"$tmp/times.0")
		for i in "${!names[@]}"; do
			m=$(median <"$tmp/times.$i")
			awk -v name="${names[$i]}" -v m="$m" -v b="$base" \
				'BEGIN { printf "%-40s median %8.1f ms  %5.2fx head\n", name, m / 1e6, m / b }'
		done
		rm -rf "$dir"
	done
done
