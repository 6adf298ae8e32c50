# Shared by the scripts that time mecha against a shell baseline
# (list-vs-head.sh, stats-vs-grep.sh); sourced, not run. The sourcing
# script sets rounds and defines run INDEX DIR (0 is the baseline, i > 0
# is bins[i-1]) before calling rotate.
#
# It sets root (the checkout), tmp (removed at exit), bins (the binaries
# given as arguments, else this checkout built), and builds the session
# package's test binary, whose write-store child mode writes the stores
# with the generator the benchmarks use. The builds run at nice 19, so that
# on a shared machine they do not slow whatever else is being timed.

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

bins=("$@")
if [ ${#bins[@]} -eq 0 ]; then
	(cd "$root" && nice -n 19 go build -o "$tmp/mecha" ./cmd/mecha)
	bins=("$tmp/mecha")
fi
(cd "$root" && nice -n 19 go test -c -o "$tmp/session.test" ./record/session)
mkdir -p "$tmp/home"

# now prints the wall clock in nanoseconds.
now() { date +%s%N; }

# indexed DIR: each binary indexes the store first ("sessions reindex";
# a build from before the index fails it and reads the transcripts as it
# always did), so that the rounds time an indexed store's listing, with no
# background indexing (which a large unindexed store starts) beside them.
indexed() {
	local b
	for b in "${bins[@]}"; do
		MECHA_HOME="$tmp/home" MECHA_SESSION_DIR="$1" "$b" sessions reindex >/dev/null 2>&1 || true
	done
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# rotate DIR COUNT: one untimed round of every command to warm the page
# cache, then $rounds rounds, each starting one command later than the one
# before, so a shared machine's drift weighs on all alike; the wall times
# in nanoseconds go to $tmp/times.I.
rotate() {
	local dir=$1 count=$2 i k r start
	for ((i = 0; i < count; i++)); do run "$i" "$dir"; done
	for ((i = 0; i < count; i++)); do : >"$tmp/times.$i"; done
	for ((r = 0; r < rounds; r++)); do
		for ((k = 0; k < count; k++)); do
			i=$(((k + r) % count))
			start=$(now)
			run "$i" "$dir"
			echo $(($(now) - start)) >>"$tmp/times.$i"
		done
	done
}
