#!/bin/sh
# The cost of confining one shell call: "mecha tool call --yes shell" of
# "true", one process per call, ROUNDS rounds, each round running every
# variant once in turn (so that the machine's noise falls on all alike).
# Prints the median wall time of each variant in milliseconds.
#
#   scripts/shell-cost.sh OLD_MECHA NEW_MECHA
#
# OLD_MECHA is the baseline build, NEW_MECHA the build measured: confined
# with namespaces (the default), confined without
# (MECHA_SANDBOX_NO_NAMESPACES=1), and unconfined (--sandbox none). When
# NEW_MECHA has the small helper beside it (mecha-sandbox, built from
# cmd/mecha-sandbox), the confined variants start it, and new-self is the
# same call by a copy of NEW_MECHA alone, which starts itself as the helper.
set -eu
old=$1 new=$2
rounds=${ROUNDS:-40}
# mecha's home where it normally is, in the user's home (the deny list's
# shape depends on it), but a fresh one.
ws=$(mktemp -d) home="$HOME/.mecha-shell-cost.$$" alone=$(mktemp -d)
mkdir -p "$home"
trap 'rm -rf "$ws" "$home" "$alone"' EXIT
self=""
if [ -x "$(dirname "$new")/mecha-sandbox" ]; then
	cp "$new" "$alone/mecha"
	self="$alone/mecha"
fi
cd "$ws"
export MECHA_HOME="$home"
call='{"command":"true"}'
ms() { # run the rest, print its wall time in ms
	s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N)
	echo $(( (e - s) / 1000 ))
}
for i in $(seq "$rounds"); do
	echo "old-landlock $(ms "$old" tool call --yes shell "$call")"
	echo "old-none $(ms "$old" tool call --yes --sandbox none shell "$call")"
	echo "new-namespaces $(ms "$new" tool call --yes shell "$call")"
	if [ -n "$self" ]; then echo "new-self $(ms "$self" tool call --yes shell "$call")"; fi
	echo "new-landlock-only $(ms env MECHA_SANDBOX_NO_NAMESPACES=1 "$new" tool call --yes shell "$call")"
	echo "new-none $(ms "$new" tool call --yes --sandbox none shell "$call")"
done | sort -k1,1 -k2,2n | awk '
	{ v[$1, ++n[$1]] = $2 }
	END { for (k in n) { m = n[k]; mid = (m % 2) ? v[k, (m + 1) / 2] : (v[k, m / 2] + v[k, m / 2 + 1]) / 2; printf "%-18s median %.1f ms (%d calls)\n", k, mid / 1000, m } }' | sort
