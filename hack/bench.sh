#!/usr/bin/env bash
# hack/bench.sh: end-to-end benchmarks of opm on synthetic catalogs
# (`make bench`).
#
# Generates catalogs of P packages x B bundles with internal/gencatalog
# (cached in $BENCH_DIR, default /tmp/opm-bench, keyed by the generator's
# source so a changed generator regenerates), then times opm on each with
# GNU time and prints wall time, throughput (catalog MB / wall s) and peak
# RSS. Exits non-zero if any command fails.
#
# Environment:
#   BENCH_DIR    cache of generated catalogs (default /tmp/opm-bench)
#   BENCH_SIZES  space-separated PxB sizes (default "50x20 200x20 800x20")
#   BENCH_RUNS   runs per command; the fastest is reported (default 1)
#   OPM          opm binary (default bin/opm, built if missing)
set -euo pipefail

cd "$(dirname "$0")/.."

BENCH_DIR=${BENCH_DIR:-/tmp/opm-bench}
BENCH_SIZES=${BENCH_SIZES:-"50x20 200x20 800x20"}
BENCH_RUNS=${BENCH_RUNS:-1}
OPM=${OPM:-bin/opm}
TIME=/usr/bin/time

die() { echo "bench: $*" >&2; exit 1; }

[ -x "$TIME" ] || die "GNU time not found at $TIME (Debian: apt-get install -y time)"
"$TIME" -f '%e %M' true 2>/dev/null || die "$TIME is not GNU time (Debian: apt-get install -y time)"

if [ ! -x "$OPM" ]; then
	echo "bench: building $OPM" >&2
	go build -o "$OPM" ./cmd/opm
fi

BENCH_NAME=bench
# shellcheck source=hack/lib-catalog.sh
. hack/lib-catalog.sh

has_validate=false
if "$OPM" validate --help 2>/dev/null | grep -q '^  opm validate'; then
	has_validate=true
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

failed=0
rows=()

# measure SIZE MB LABEL CMD...: run CMD BENCH_RUNS times with stdout
# discarded and record the fastest run's wall and CPU (user+sys) time, and
# the highest peak RSS. CPU time shows the work done even when other
# processes compete for the cores and stretch the wall time.
measure() {
	local size=$1 mb=$2 label=$3
	shift 3
	local best="" cpu="" rss=0 i wall kb usr sys
	for ((i = 0; i < BENCH_RUNS; i++)); do
		if ! "$TIME" -f '%e %M %U %S' -o "$tmp/time" "$@" >/dev/null 2>"$tmp/stderr"; then
			echo "bench: FAILED: $*" >&2
			tail -n 20 "$tmp/stderr" >&2
			rows+=("$(printf '%-8s %10s  %-16s %8s %8s %8s %12s' "$size" "$mb" "$label" FAILED - - -)")
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
	rows+=("$(awk -v s="$size" -v mb="$mb" -v c="$label" -v w="$best" -v cpu="$cpu" -v kb="$rss" 'BEGIN {
		printf "%-8s %10s  %-16s %8.2f %8.2f %8.1f %12.0f", s, mb, c, w, cpu, (w > 0 ? mb / w : 0), kb / 1024 }')")
}

for size in $BENCH_SIZES; do
	p=${size%x*}
	b=${size#*x}
	dir=$(bench_catalog "$p" "$b")
	# Reading every file once measures the size and warms the page cache.
	bytes=$(find "$dir" -type f -exec cat {} + | wc -c)
	mb=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }')
	measure "$size" "$mb" "render -o json" "$OPM" render "$dir" -o json
	if [ "$p" -lt 800 ]; then
		measure "$size" "$mb" "render -o yaml" "$OPM" render "$dir" -o yaml
	fi
	if $has_validate; then
		measure "$size" "$mb" "validate" "$OPM" validate "$dir"
		# OLM v1 refuses some synthetic bundles (dependencies): the baseline
		# accepts today's findings, so that the run exits 0.
		if "$OPM" validate --help 2>/dev/null | grep -q -- '--target'; then
			measure "$size" "$mb" "validate olm-v1" "$OPM" validate "$dir" --target olm-v1 --write-baseline "$tmp/olmv1-baseline.json"
		fi
	fi
done

echo
echo "opm: $("$OPM" version 2>/dev/null | head -n 1)"
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), runs per command: $BENCH_RUNS"
echo
printf '%-8s %10s  %-16s %8s %8s %8s %12s\n' size "catalog MB" command "wall s" "CPU s" "MB/s" "peak RSS MB"
printf '%s\n' "${rows[@]}"
exit "$failed"
