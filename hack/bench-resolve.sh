#!/usr/bin/env bash
# hack/bench-resolve.sh: wall time and peak RSS of `opm resolve` on the
# largest catalog of the conformance suite (read in place, never copied).
#
# Runs, with GNU time:
#   all      one `opm resolve` subscribing to every package at once;
#   each     one `opm resolve` per package (total wall time, largest RSS);
#   all-ok   one `opm resolve` subscribing at once to every package that
#            resolved on its own;
#   validate `opm validate --check-dependencies` (every channel head).
# Every run loads the catalog; the Go benchmarks in pkg/resolve
# (go test -bench Resolve ./pkg/resolve) time the resolution alone.
#
# Environment:
#   CATALOG  catalog directory (default: the conformance suite's
#            community-operators-prod-v4.20, beside the repository)
#   OPM      opm binary (default bin/opm, built if missing)
set -euo pipefail

cd "$(dirname "$0")/.."

CATALOG=${CATALOG:-../shared/conformance/catalog/community-operators-prod-v4.20/input}
OPM=${OPM:-bin/opm}
TIME=/usr/bin/time

die() { echo "bench-resolve: $*" >&2; exit 1; }

[ -d "$CATALOG" ] || die "no catalog at $CATALOG"
"$TIME" -f '%e %M' true 2>/dev/null || die "$TIME is not GNU time (Debian: apt-get install -y time)"
if [ ! -x "$OPM" ]; then
	go build -o "$OPM" ./cmd/opm
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mapfile -t pkgs < <("$OPM" alpha list packages "$CATALOG" | tail -n +2 | awk '{print $1}')
[ "${#pkgs[@]}" -gt 0 ] || die "no packages in $CATALOG"
echo "catalog: $CATALOG ($(du -sh "$CATALOG" | cut -f1), ${#pkgs[@]} packages)"

# measure NAME CMD...: runs CMD (exit 0 or 1 both count), prints wall s
# and peak RSS MB.
measure() {
	local name=$1
	shift
	local rc=0
	"$TIME" -f '%e %M' -o "$tmp/time" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" -le 1 ] || { cat "$tmp/err" >&2; die "$name: exit $rc"; }
	read -r wall rss < <(tail -n 1 "$tmp/time")
	echo "$wall $((rss / 1024)) $rc"
}

subs=()
for p in "${pkgs[@]}"; do subs+=(--subscribe "$p"); done
read -r wall rss rc < <(measure all "$OPM" resolve --catalog "community=$CATALOG" "${subs[@]}")
printf '%-10s %8ss %6s MB  exit %s (%s)\n' all "$wall" "$rss" "$rc" "$(head -1 "$tmp/out")"

total=0 maxrss=0 ok=0 good=()
for p in "${pkgs[@]}"; do
	read -r wall rss rc < <(measure "each $p" "$OPM" resolve --catalog "community=$CATALOG" --subscribe "$p")
	total=$(echo "$total + $wall" | bc)
	[ "$rss" -gt "$maxrss" ] && maxrss=$rss
	[ "$rc" -eq 0 ] && { ok=$((ok + 1)); good+=(--subscribe "$p"); }
done
printf '%-10s %8ss %6s MB  %d of %d resolvable\n' each "$total" "$maxrss" "$ok" "${#pkgs[@]}"

if [ "$ok" -gt 0 ]; then
	read -r wall rss rc < <(measure all-ok "$OPM" resolve --catalog "community=$CATALOG" "${good[@]}")
	printf '%-10s %8ss %6s MB  exit %s (%s)\n' all-ok "$wall" "$rss" "$rc" "$(head -1 "$tmp/out")"
fi

read -r wall rss rc < <(measure validate "$OPM" validate "$CATALOG" --check-dependencies)
printf '%-10s %8ss %6s MB  exit %s, %s dependencies-unresolvable\n' validate "$wall" "$rss" "$rc" "$(grep -c dependencies-unresolvable "$tmp/err" || true)"
