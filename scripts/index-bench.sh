#!/usr/bin/env bash
# Times the session index (record/sessionindex) against shell baselines over
# the same files, warm cache, for docs/PERFORMANCE.md:
#
#   T  10,000 sessions x 100 KB, session_turns on each summary (1 GB)
#   F  10,000 sessions x 100 KB, summaries without session_turns
#   S  10,000 sessions x 8 KB (for big/small)
#   H  100,000 sessions x 2 KB
#
# with ten sessions of T given a rare word (zebracorn) in a user message,
# and last the first listing of T right after one of its sessions was
# appended to (the index catching up on one session), and the floor of a
# search (what the freshness check and mecha's start cost alone).
#
#   scripts/index-bench.sh            # this checkout, 7 rounds
#   ONLY='list|search' scripts/index-bench.sh   # the lines whose label matches
#   ONLY=floor scripts/index-bench.sh  # the floor of a search alone
#
# Each round runs the baseline and mecha once, in an order that alternates
# from round to round; one untimed round first warms the page cache (and
# brings the index in step). It prints the median wall time and the median
# CPU time (user + system) of each, and mecha's ratio to the baseline.
# The times are perf stat's of the command alone (see timed); WALL=outer
# times the wall from outside perf, as the script did before.
# The stores are written once under $MECHA_INDEX_BENCH_ROOT (default
# $TMPDIR/mecha-index-bench, about 2.6 GB) and reused; CLEAN=1 removes them
# at the end. ROUNDS=N changes the number of rounds.
set -euo pipefail

rounds=${ROUNDS:-7}
# shellcheck source=scripts/bench-lib.sh
source "$(dirname "$0")/bench-lib.sh"
store_root=${MECHA_INDEX_BENCH_ROOT:-${TMPDIR:-/tmp}/mecha-index-bench}
mkdir -p "$store_root"
export MECHA_HOME="$tmp/home"
mecha=${bins[0]}

gen() { # gen NAME N SIZE TOTAL
	local dir="$store_root/$1"
	[ -e "$dir/.complete" ] && return
	rm -rf "$dir"
	MECHA_SESSION_TEST_CHILD=write-store MECHA_STORE_DIR="$dir" MECHA_STORE_N="$2" \
		MECHA_STORE_SIZE="$3" MECHA_STORE_LINE=65536 MECHA_STORE_TOTAL="$4" "$tmp/session.test"
	if [ "$1" = T ]; then
		# shellcheck disable=SC2012
		for f in $(ls "$dir"/*.jsonl | awk 'NR % 1000 == 7'); do
			printf '%s\n' '{"record":"message","role":"user","content":[{"type":"text","text":"the zebracorn grazes in quartz meadows near build 4471"}]}' >>"$f"
		done
	fi
	touch "$dir/.complete"
}
gen T 10000 102400 1
gen F 10000 102400 0
gen S 10000 8192 1
gen H 100000 2048 1

# timed CMD...: runs it once, appending "wall_ns cpu_s" to $tmp/t.$slot.
# With perf installed, both are perf stat's, of the command alone: its
# duration_time (from its exec to its exit) and its task-clock. perf's own
# start (about 20 ms on the 2-core machine) is then in neither figure;
# timed from outside, with date, it was added to both sides, pulling every
# ratio towards 1 (WALL=outer times from outside as before). Without perf,
# the wall is date's and the CPU GNU time's (in hundredths of a second).
timed() {
	local start
	start=$(date +%s%N)
	if [ -n "$perf" ]; then
		"$perf" stat -x, -e task-clock,duration_time -o "$tmp/cpu" "$@" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; return 1; }
		local end
		end=$(date +%s%N)
		awk -F, -v outer=$((end - start)) -v how="${WALL:-inner}" '/task-clock/ { c = $1 / 1000 } /duration_time/ { d = $1 }
			END { print (how == "outer" ? outer : d), c }' "$tmp/cpu" >>"$tmp/t.$slot"
		return
	fi
	/usr/bin/time -f "%U %S" -o "$tmp/cpu" "$@" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; return 1; }
	echo "$(($(date +%s%N) - start)) $(awk '{ print $1 + $2 }' "$tmp/cpu")" >>"$tmp/t.$slot"
}
perf=$(command -v perf || true)
if [ -n "$perf" ] && ! "$perf" stat -x, -e task-clock,duration_time -o /dev/null true 2>/dev/null; then perf=""; fi

# compare LABEL DIR "BASELINE" MECHA-ARGS...: medians and ratios.
compare() {
	local label=$1 dir=$2 base=$3 r
	shift 3
	if [ -n "${ONLY:-}" ] && ! [[ $label =~ $ONLY ]]; then return; fi
	local args=("$@")
	: >"$tmp/t.0"
	: >"$tmp/t.1"
	slot=0 timed bash -c "$base"
	MECHA_SESSION_DIR="$dir" slot=1 timed "$mecha" "${args[@]}"
	: >"$tmp/t.0"
	: >"$tmp/t.1"
	for ((r = 0; r < rounds; r++)); do
		if ((r % 2)); then
			MECHA_SESSION_DIR="$dir" slot=1 timed "$mecha" "${args[@]}"
			slot=0 timed bash -c "$base"
		else
			slot=0 timed bash -c "$base"
			MECHA_SESSION_DIR="$dir" slot=1 timed "$mecha" "${args[@]}"
		fi
	done
	local bw bc mw mc
	bw=$(cut -d' ' -f1 "$tmp/t.0" | median)
	bc=$(cut -d' ' -f2 "$tmp/t.0" | median)
	mw=$(cut -d' ' -f1 "$tmp/t.1" | median)
	mc=$(cut -d' ' -f2 "$tmp/t.1" | median)
	awk -v l="$label" -v b="$base" -v a="mecha ${args[*]}" -v bw="$bw" -v bc="$bc" -v mw="$mw" -v mc="$mc" 'BEGIN {
		printf "== %s\n  %-52s wall %8.1f ms  cpu %7.1f ms\n  %-52s wall %8.1f ms  cpu %7.1f ms   %.2fx wall  %.2fx cpu\n",
			l, substr(b, 1, 52), bw / 1e6, bc * 1e3, substr(a, 1, 52), mw / 1e6, mc * 1e3, mw / bw, (bc > 0 ? mc / bc : 0) }'
}

echo "load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores, $rounds rounds, wall ${WALL:-inner}$([ -z "$perf" ] && echo " (no perf: outer)")"

# First indexing, from no index at all (once each: it runs once; FIRST=0
# skips it and keeps the indexes there are).
for s in T H; do
	[ "${FIRST:-1}" = 0 ] && break
	rm -rf "$store_root/$s"/.index
	start=$(date +%s%N)
	/usr/bin/time -f "%U %S" -o "$tmp/cpu" env MECHA_SESSION_DIR="$store_root/$s" "$mecha" sessions reindex
	echo "== first indexing of $s ($(du -sh --exclude=.index "$store_root/$s" | cut -f1)): wall $((($(date +%s%N) - start) / 1000000)) ms, cpu $(awk '{ print $1 + $2 }' "$tmp/cpu") s"
	echo "   index: $(du -sh "$store_root/$s"/.index | cut -f1) ($(ls "$store_root/$s"/.index | tr '\n' ' '))"
done
# Every store indexed before the rounds (a listing of a large unindexed
# store would start the indexing in the background, beside the timing).
for s in T F S H; do
	[ -e "$store_root/$s/.index/index.list" ] || env MECHA_SESSION_DIR="$store_root/$s" "$mecha" sessions reindex >/dev/null
	env MECHA_SESSION_DIR="$store_root/$s" "$mecha" sessions list -n 1 >/dev/null
done
for s in T H; do echo "== index of $s: $(du -sh "$store_root/$s"/.index | cut -f1), store $(du -sh --exclude=.index "$store_root/$s" | cut -f1)"; done

compare "list, 10,000 x 100 KB, session_turns" "$store_root/T" "head -qn1 $store_root/T/*.jsonl" sessions list
compare "list, 10,000 x 100 KB, no session_turns" "$store_root/F" "head -qn1 $store_root/F/*.jsonl" sessions list
compare "list, 10,000 x 8 KB" "$store_root/S" "head -qn1 $store_root/S/*.jsonl" sessions list
compare "list -n 50, 100,000 x 2 KB" "$store_root/H" "find $store_root/H -name '*.jsonl' -print0 | xargs -0 head -qn1" sessions list -n 50
compare "list --json, 100,000 x 2 KB" "$store_root/H" "find $store_root/H -name '*.jsonl' -print0 | xargs -0 head -qn1" sessions list --json
compare "search a rare word, 1 GB" "$store_root/T" "rg -lF zebracorn $store_root/T" sessions search zebracorn
compare "search a phrase, 1 GB" "$store_root/T" "rg -lF 'quartz meadows' $store_root/T" sessions search "quartz meadows"
compare "search --regex with a literal fragment, 1 GB" "$store_root/T" "rg -l 'zebra[a-z]+ grazes' $store_root/T" sessions search --regex 'zebra[a-z]+ grazes'
compare "stats, 10,000 x 100 KB" "$store_root/T" "grep -rhF '{\"record\":\"summary\"' $store_root/T" sessions stats

# The floor of a search: what its two mandated parts cost as processes of
# their own, timed as the commands above are, interleaved with rg and the
# search (each round starts one later). hello is a Go program that writes a
# line (what any Go process costs to start and exit); check stats the
# store's 10,000 files by name on two threads from a directory descriptor,
# and nothing else (the freshness check every reader does, with no index,
# no snapshot and no output); version is mecha --version (mecha's start).
# Its start above hello's plus check is the least a search can take here.
if [ -z "${ONLY:-}" ] || [[ "floor of a search" =~ $ONLY ]]; then
	mkdir -p "$tmp/floor"
	cat >"$tmp/floor/hello.go" <<'GO'
package main

import "os"

func main() { os.Stdout.WriteString("hello\n") }
GO
	cat >"$tmp/floor/check.go" <<'GO'
// check DIR NAMES: fstatat each name of the file NAMES in DIR, on two
// threads; exits 1 if any is missing.
package main

import (
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

func main() {
	dir, err := os.Open(os.Args[1])
	if err != nil {
		os.Exit(2)
	}
	list, err := os.ReadFile(os.Args[2])
	if err != nil {
		os.Exit(2)
	}
	names := strings.Split(strings.TrimSpace(string(list)), "\n")
	fd := int(dir.Fd())
	var wg sync.WaitGroup
	var missing atomic.Bool
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var st unix.Stat_t
			for i := w; i < len(names); i += 2 {
				if unix.Fstatat(fd, names[i], &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
					missing.Store(true)
				}
			}
		}(w)
	}
	wg.Wait()
	if missing.Load() {
		os.Exit(1)
	}
}
GO
	(cd "$root" && nice -n 19 go build -o "$tmp/floor/hello" "$tmp/floor/hello.go" &&
		nice -n 19 go build -o "$tmp/floor/check" "$tmp/floor/check.go")
	find "$store_root/T" -maxdepth 1 -name '*.jsonl' -printf '%f\n' >"$tmp/floor/names"
	# floorrun K: times the K-th command (rg as compare's baselines are run,
	# through bash -c; the others directly, as compare runs mecha).
	floorrun() {
		case $1 in
		0) slot=f0 timed bash -c "rg -lF zebracorn $store_root/T" ;;
		1) slot=f1 timed "$tmp/floor/hello" ;;
		2) slot=f2 timed "$tmp/floor/check" "$store_root/T" "$tmp/floor/names" ;;
		3) slot=f3 timed "$mecha" --version ;;
		4) MECHA_SESSION_DIR="$store_root/T" slot=f4 timed "$mecha" sessions search zebracorn ;;
		esac
	}
	for ((k = 0; k < 5; k++)); do
		: >"$tmp/t.f$k"
		floorrun $k
		: >"$tmp/t.f$k"
	done
	for ((r = 0; r < rounds * 2; r++)); do
		for ((j = 0; j < 5; j++)); do floorrun $(((j + r) % 5)); done
	done
	for ((k = 0; k < 5; k++)); do
		fw[k]=$(cut -d' ' -f1 "$tmp/t.f$k" | median)
		fc[k]=$(cut -d' ' -f2 "$tmp/t.f$k" | median)
	done
	awk -v rg="${fw[0]}" -v h="${fw[1]}" -v c="${fw[2]}" -v v="${fw[3]}" -v s="${fw[4]}" \
		-v rgc="${fc[0]}" -v hc="${fc[1]}" -v cc="${fc[2]}" -v vc="${fc[3]}" -v sc="${fc[4]}" 'BEGIN {
		printf "== floor of a search, 1 GB (wall / cpu medians, %d rounds)\n", '"$((rounds * 2))"'
		printf "  %-40s %7.1f / %7.1f ms\n", "rg -lF zebracorn", rg / 1e6, rgc * 1e3
		printf "  %-40s %7.1f / %7.1f ms  %.3fx rg\n", "hello (a Go process)", h / 1e6, hc * 1e3, h / rg
		printf "  %-40s %7.1f / %7.1f ms  %.3fx rg\n", "check (10,000 fstatat, 2 threads)", c / 1e6, cc * 1e3, c / rg
		printf "  %-40s %7.1f / %7.1f ms  %.3fx rg\n", "mecha --version", v / 1e6, vc * 1e3, v / rg
		printf "  %-40s %7.1f / %7.1f ms  %.3fx rg\n", "mecha sessions search zebracorn", s / 1e6, sc * 1e3, s / rg
		printf "  floor (check + version - hello): %.1f ms, %.3fx rg; the target 0.1x is %.1f ms\n", (c + v - h) / 1e6, (c + v - h) / rg, rg / 1e7 }'
fi

# The first listing after a session was appended to (a resumed run): the
# index brings that session in step and patches the snapshot. Each round
# appends a line to the same session first; the baseline is head as above.
if [ -n "${ONLY:-}" ] && ! [[ "append version" =~ $ONLY ]]; then exit 0; fi
victim=$(find "$store_root/T" -maxdepth 1 -name '*.jsonl' | sort | sed -n 5000p)
: >"$tmp/t.0"
: >"$tmp/t.1"
for ((r = 0; r < rounds; r++)); do
	printf '%s\n' '{"record":"taint","private":true,"untrusted":false}' >>"$victim"
	MECHA_SESSION_DIR="$store_root/T" slot=1 timed "$mecha" sessions list
	slot=0 timed bash -c "head -qn1 $store_root/T/*.jsonl"
done
awk -v bw="$(cut -d' ' -f1 "$tmp/t.0" | median)" -v mw="$(cut -d' ' -f1 "$tmp/t.1" | median)" \
	'BEGIN { printf "== list right after an append to one of 10,000 sessions: %.1f ms against head %.1f ms, %.2fx wall (medians)\n", mw / 1e6, bw / 1e6, mw / bw }'

base="$tmp/base"
mkdir -p "$base"
(cd "$root" && git archive "${BASE:-4d7c502}" | tar -x -C "$base")
(cd "$base" && nice -n 19 go build -o "$tmp/mecha-base" ./cmd/mecha)
: >"$tmp/t.0"
: >"$tmp/t.1"
for ((r = 0; r < rounds * 3; r++)); do
	slot=0 timed "$tmp/mecha-base" --version
	slot=1 timed "$mecha" --version
done
awk -v b="$(cut -d' ' -f1 "$tmp/t.0" | median)" -v m="$(cut -d' ' -f1 "$tmp/t.1" | median)" \
	'BEGIN { printf "== mecha --version: before the index %.1f ms, with it %.1f ms (wall medians)\n", b / 1e6, m / 1e6 }'

echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "${CLEAN:-0}" = 1 ]; then rm -rf "$store_root"; fi
