#!/usr/bin/env bash
# Times `mecha --version` (process start-up: the package initialisers of
# everything linked into the one binary) of this checkout against a base
# commit's, interleaved, and prints each median, their difference, and the
# time of the package initialisers of each (GODEBUG=inittrace=1: their sum
# and the slowest, medians of 31 runs).
#
#   scripts/startup-vs-base.sh              # base: main
#   BASE=COMMIT ROUNDS=400 scripts/startup-vs-base.sh
#
# Both binaries are built at nice 19 into a temporary directory (removed at
# exit); each round runs both, in an order that alternates, after 20
# untimed rounds. Run it with nothing else of yours running.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
base=${BASE:-main}
mkdir -p "$tmp/base"
(cd "$root" && git archive "$base" | tar -x -C "$tmp/base")
(cd "$tmp/base" && nice -n 19 go build -o "$tmp/mecha-base" ./cmd/mecha)
(cd "$root" && nice -n 19 go build -o "$tmp/mecha" ./cmd/mecha)
echo "base $base ($(cd "$root" && git rev-parse --short "$base")), this checkout ($(cd "$root" && git rev-parse --short HEAD)$(cd "$root" && git diff --quiet HEAD -- . || echo ', modified'))"

echo "binaries: base $(stat -c %s "$tmp/mecha-base") bytes, this $(stat -c %s "$tmp/mecha") bytes"

python3 - "$tmp/mecha-base" "$tmp/mecha" "${ROUNDS:-200}" <<'PY'
import statistics, subprocess, sys, time
bins, rounds = sys.argv[1:3], int(sys.argv[3])
def once(b):
    t = time.perf_counter_ns()
    subprocess.run([b, "--version"], stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter_ns() - t
for _ in range(20):
    for b in bins:
        once(b)
times = [[], []]
for r in range(rounds):
    order = (0, 1) if r % 2 == 0 else (1, 0)
    for i in order:
        times[i].append(once(bins[i]))
m = [statistics.median(t) / 1e6 for t in times]
print(f"mecha --version, {rounds} interleaved rounds, wall medians: base {m[0]:.2f} ms, this {m[1]:.2f} ms, "
      f"{m[1] - m[0]:+.2f} ms ({m[1] / m[0]:.2f}x)")
PY

python3 - "$tmp/mecha-base" "$tmp/mecha" <<'PY'
import collections, os, statistics, subprocess, sys
# GODEBUG=inittrace=1 over 31 runs of each: the median clock of each
# package's init and of their sum (one run alone is too noisy to read).
env = dict(os.environ, GODEBUG="inittrace=1")
pkgs = {}
for name, b in zip(("base", "this"), sys.argv[1:3]):
    per, sums = collections.defaultdict(list), []
    for _ in range(31):
        err = subprocess.run([b, "--version"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True).stderr
        total = 0.0
        for line in err.splitlines():
            f = line.split()
            if len(f) > 5 and f[0] == "init":
                ms = float(f[4])
                per[f[1]].append(ms)
                total += ms
        sums.append(total)
    print(f"== {name}: {len(per)} packages initialised, {statistics.median(sums):.2f} ms of init (median of 31 runs); the slowest:")
    for pkg, v in sorted(per.items(), key=lambda kv: -statistics.median(kv[1]))[:10]:
        print(f"   {statistics.median(v):5.2f} ms  {pkg}")
    pkgs[name] = {p: statistics.median(v) for p, v in per.items()}
# What only one side initialises: the packages a change of dependency took
# out of the binary or brought in.
for a, b in (("base", "this"), ("this", "base")):
    only = {p: ms for p, ms in pkgs[a].items() if p not in pkgs[b]}
    print(f"== initialised by {a} only: {len(only)} packages, {sum(only.values()):.2f} ms: " +
          ", ".join(f"{p} {ms:.2f}" for p, ms in sorted(only.items(), key=lambda kv: -kv[1])))
PY
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
