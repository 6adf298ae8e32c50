#!/usr/bin/env bash
# Times `mecha sessions stats` against grep -rhF '{"record":"summary"' over
# the same store, on the two shapes docs/PERFORMANCE.md quotes, warm cache:
#
#   10,000 sessions x 100 KB of 4 KB lines   (per-file and per-line costs show)
#    1,000 sessions x 1 MB of 64 KB lines    (reading the bytes is nearly all)
#
#   scripts/stats-vs-grep.sh                 # this checkout, 5 rounds
#   scripts/stats-vs-grep.sh BIN [BIN ...]   # these mecha binaries, side by side
#
# Each round runs grep and every binary once, in an order that rotates from
# round to round, so the drift of a shared machine weighs on all alike;
# one untimed round first warms the page cache. It prints the median wall
# time of each (process start-up included) and its ratio to grep's median.
# ROUNDS=N changes the number of rounds. The stores (about 2 GB) are
# written under a temporary directory (TMPDIR) and removed at exit.
set -euo pipefail

rounds=${ROUNDS:-5}
# shellcheck source=scripts/bench-lib.sh
source "$(dirname "$0")/bench-lib.sh"

run() { # run INDEX DIR: 0 is grep, i > 0 is bins[i-1]
	if [ "$1" -eq 0 ]; then
		grep -rhF '{"record":"summary"' "$2" >/dev/null
	else
		MECHA_HOME="$tmp/home" MECHA_SESSION_DIR="$2" "${bins[$1 - 1]}" sessions stats >/dev/null
	fi
}

names=(grep "${bins[@]}")
for shape in "10000 102400 4096" "1000 1048576 65536"; do
	read -r n size line <<<"$shape"
	dir="$tmp/store-$n-$size-$line"
	MECHA_SESSION_TEST_CHILD=write-store MECHA_STORE_DIR="$dir" MECHA_STORE_N="$n" \
		MECHA_STORE_SIZE="$size" MECHA_STORE_LINE="$line" "$tmp/session.test"
	echo "== $n sessions x $((size / 1024)) KB of $((line / 1024)) KB lines ($(du -sh "$dir" | cut -f1)), $rounds rounds"
	indexed "$dir"
	rotate "$dir" ${#names[@]}
	base=$(median <"$tmp/times.0")
	for i in "${!names[@]}"; do
		m=$(median <"$tmp/times.$i")
		awk -v name="${names[$i]}" -v m="$m" -v b="$base" -v all="$(sort -n "$tmp/times.$i" | tr '\n' ' ')" \
			'BEGIN { printf "%-40s median %7.3f s  %5.2fx grep   (ns: %s)\n", name, m / 1e9, m / b, all }'
	done
	rm -rf "$dir"
done
