#!/usr/bin/env bash
# hack/bench-compose.sh: end-to-end benchmarks of opm catalog diff, filter
# and merge on synthetic catalogs, beside opm render for comparison.
#
# For each size PxB it takes the catalog hack/bench.sh generates (the same
# cache in $BENCH_DIR), makes a copy in which 1% of the bundles differ (a
# new image digest for the first bundle of P*B/100 evenly spread packages:
# 40 bundles of every fifth package at 200x20), and times with GNU time:
#   render OLD -o json                  the baseline: load and write once
#   catalog diff OLD NEW                both catalogs loaded, one at a time
#   catalog diff OLD NEW -o json --fail-on removed,heads,paths
#   catalog filter OLD --package pkg-001
#   catalog filter OLD --heads-only
#   catalog merge OLD examples/catalog
# and prints wall time, CPU time (user+sys) and peak RSS. Exits non-zero if
# a command fails.
#
# Environment: BENCH_DIR (default /tmp/opm-bench), BENCH_SIZES (default
# "200x20"), BENCH_RUNS (default 1; the fastest run is reported, with the
# highest peak RSS), OPM (default bin/opm, built if missing).
set -euo pipefail

cd "$(dirname "$0")/.."

BENCH_DIR=${BENCH_DIR:-/tmp/opm-bench}
BENCH_SIZES=${BENCH_SIZES:-"200x20"}
BENCH_RUNS=${BENCH_RUNS:-1}
OPM=${OPM:-bin/opm}
TIME=/usr/bin/time

die() { echo "bench-compose: $*" >&2; exit 1; }

[ -x "$TIME" ] || die "GNU time not found at $TIME (Debian: apt-get install -y time)"
command -v perl >/dev/null || die "perl not found"

if [ ! -x "$OPM" ]; then
	echo "bench-compose: building $OPM" >&2
	go build -o "$OPM" ./cmd/opm
fi

BENCH_NAME=bench-compose
# shellcheck source=hack/lib-catalog.sh
. hack/lib-catalog.sh

# changed OLD P B: a copy of OLD where P*B/100 bundles (at least one) have
# another image digest: the first bundle of evenly spread packages.
changed() {
	local old=$1 p=$2 b=$3 dir="$1-1pct"
	if [ ! -d "$dir" ]; then
		echo "bench-compose: copying $old with 1% of the bundles changed" >&2
		rm -rf "$dir.tmp"
		cp -r "$old" "$dir.tmp"
		local n=$(((p * b + 99) / 100)) i k width
		width=$(ls "$old" | head -n 1 | sed 's/^pkg-//' | tr -d '\n' | wc -c)
		for ((k = 0; k < n; k++)); do
			i=$((1 + k * p / n))
			perl -0pi -e 's/(-bundle\@sha256:)([0-9a-f])/$1.($2 eq "0" ? "1" : "0")/e' \
				"$dir.tmp/$(printf "pkg-%0${width}d" "$i")/catalog.json"
		done
		mv "$dir.tmp" "$dir"
	fi
	echo "$dir"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
rows=()

# measure SIZE LABEL CMD...: like hack/bench.sh, stdout discarded.
measure() {
	local size=$1 label=$2
	shift 2
	local best="" cpu="" rss=0 i wall kb usr sys
	for ((i = 0; i < BENCH_RUNS; i++)); do
		if ! "$TIME" -f '%e %M %U %S' -o "$tmp/time" "$@" >/dev/null 2>"$tmp/stderr"; then
			echo "bench-compose: FAILED: $*" >&2
			tail -n 20 "$tmp/stderr" >&2
			rows+=("$(printf '%-8s %-48s %8s %8s %12s' "$size" "$label" FAILED - -)")
			failed=1
			return
		fi
		read -r wall kb usr sys <"$tmp/time"
		if [ -z "$best" ] || awk -v a="$wall" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$wall
			cpu=$(awk -v u="$usr" -v s="$sys" 'BEGIN { print u + s }')
		fi
		if [ "$kb" -gt "$rss" ]; then rss=$kb; fi
	done
	rows+=("$(awk -v s="$size" -v c="$label" -v w="$best" -v cpu="$cpu" -v kb="$rss" 'BEGIN {
		printf "%-8s %-48s %8.2f %8.2f %12.0f", s, c, w, cpu, kb / 1024 }')")
}

for size in $BENCH_SIZES; do
	p=${size%x*}
	b=${size#*x}
	old=$(bench_catalog "$p" "$b")
	new=$(changed "$old" "$p" "$b")
	find "$old" "$new" -type f -exec cat {} + >/dev/null # warm the page cache
	first=$(ls "$old" | head -n 1)
	measure "$size" "render OLD -o json" "$OPM" render "$old" -o json
	measure "$size" "catalog diff OLD NEW" "$OPM" catalog diff "$old" "$new"
	measure "$size" "catalog diff -o json --fail-on removed,heads,paths" "$OPM" catalog diff "$old" "$new" -o json --fail-on removed,heads,paths
	measure "$size" "catalog filter OLD --package $first" "$OPM" catalog filter "$old" --package "$first"
	measure "$size" "catalog filter OLD --heads-only" "$OPM" catalog filter "$old" --heads-only
	measure "$size" "catalog merge OLD examples/catalog" "$OPM" catalog merge "$old" examples/catalog
	"$OPM" catalog diff "$old" "$new" | tail -n 1 >"$tmp/summary"
	echo "$size: $(cat "$tmp/summary")" >&2
done

echo
echo "opm: $("$OPM" version 2>/dev/null | head -n 1)"
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), runs per command: $BENCH_RUNS"
echo
printf '%-8s %-48s %8s %8s %12s\n' size command "wall s" "CPU s" "peak RSS MB"
printf '%s\n' "${rows[@]}"
exit "$failed"
