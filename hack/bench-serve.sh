#!/usr/bin/env bash
# hack/bench-serve.sh: start-up time and memory of `opm serve` (part of
# `make bench`), and the OLM resolver's call mix under load.
#
# For each catalog it starts `opm serve` (on 127.0.0.1 only) and measures,
# with internal/servebench: the time from spawning the process to the first
# SERVING answer of grpc.health.v1.Health/Check (a TCP connect polled every
# 20 ms, then the health call, as upstream's figures in
# ../shared/conformance/serve/UPSTREAM-STARTUP.md were taken), the CPU time
# used by then, VmHWM (peak RSS) at that moment and after a full
# ListBundles; the median of BENCH_RUNS starts is printed. Then OLM's own
# call pattern against a catalog pod (servebench.OLMPattern: the catalog
# operator's sync, the package server's concurrent refresh, the provider
# look-ups, GetBundle for every bundle): its time and the peak RSS after
# it, the highest of the starts (OLM asks 50Mi for a catalog pod). Each
# catalog is measured without a cache and with --cache-dir (a first,
# unmeasured start builds the cache). Then 50 clients run the call mix (40 calls each)
# against the 200 x 20 catalog: no call may fail; p50/p90/p99 are printed.
#
# Catalogs: the 200 x 20 synthetic catalog of internal/gencatalog (shared
# with hack/bench.sh through BENCH_DIR) and, when ../shared/conformance is
# beside the repository, its serve/ cases' catalogs (the largest is
# community-operators-prod-v4.20).
#
# Environment:
#   BENCH_DIR        cache of generated catalogs (default /tmp/opm-bench)
#   BENCH_RUNS       measured starts per catalog (default 3)
#   SERVE_SIZES      synthetic sizes (default "200x20")
#   SERVE_CASES      conformance catalogs (default: every serve/ case that
#                    is served, i.e. not a refused one)
#   SERVE_LOAD       0 skips the call mix (default 1)
#   OPM              opm binary (default bin/opm, built if missing)
set -euo pipefail

cd "$(dirname "$0")/.."

BENCH_DIR=${BENCH_DIR:-/tmp/opm-bench}
BENCH_RUNS=${BENCH_RUNS:-3}
SERVE_SIZES=${SERVE_SIZES:-"200x20"}
SERVE_LOAD=${SERVE_LOAD:-1}
OPM=${OPM:-bin/opm}
SUITE=${OPM_CONFORMANCE_DIR:-../shared/conformance}

if [ ! -x "$OPM" ]; then
	echo "bench-serve: building $OPM" >&2
	CGO_ENABLED=0 go build -o "$OPM" ./cmd/opm
fi
mkdir -p "$BENCH_DIR"
SB="$BENCH_DIR/servebench"
go build -o "$SB" ./internal/servebench/cmd/servebench
BENCH_NAME=bench-serve
# shellcheck source=hack/lib-catalog.sh
. hack/lib-catalog.sh

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Catalogs to measure: label<TAB>directory.
targets=()
for size in $SERVE_SIZES; do
	targets+=("$size	$(bench_catalog "${size%x*}" "${size#*x}")")
done
if [ -d "$SUITE/serve" ]; then
	cases=${SERVE_CASES:-$(ls "$SUITE/serve")}
	for c in $cases; do
		d="$SUITE/serve/$c"
		[ -d "$d" ] && [ ! -e "$d/startup.json" ] || continue
		if [ -d "$d/input" ]; then
			targets+=("$c	$d/input")
		elif [ -f "$d/input.ref" ]; then
			targets+=("$c	$SUITE/$(cat "$d/input.ref")/input")
		fi
	done
else
	echo "bench-serve: $SUITE not found; measuring the synthetic catalogs only" >&2
fi

failed=0
rows=()
for t in "${targets[@]}"; do
	label=${t%%	*}
	dir=${t#*	}
	# Reading every file once warms the page cache, as for hack/bench.sh.
	find "$dir" -type f -exec cat {} + >/dev/null
	if row=$("$SB" -opm "$OPM" -catalog "$dir" -label "$label" -runs "$BENCH_RUNS" -olm); then
		rows+=("$(printf '%s\tno' "$row")")
	else
		failed=1
	fi
	rm -rf "$tmp/cache"
	if row=$("$SB" -opm "$OPM" -catalog "$dir" -label "$label" -runs "$BENCH_RUNS" -olm -cache-dir "$tmp/cache"); then
		rows+=("$(printf '%s\tyes' "$row")")
	else
		failed=1
	fi
done

echo
echo "opm: $("$OPM" version 2>/dev/null | head -n 1)"
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), median of $BENCH_RUNS starts"
echo
{
	printf 'catalog\thealthy s\tCPU s\tRSS healthy MiB\tListBundles s\tRSS after ListBundles MiB\trecords\tOLM pattern s\tpeak RSS after OLM pattern MiB\tOLM calls\tcache\n'
	printf '%s\n' "${rows[@]}"
} | if command -v column >/dev/null; then column -t -s '	'; else cat; fi

if [ "$SERVE_LOAD" != 0 ]; then
	for size in $SERVE_SIZES; do
		echo
		dir=$(bench_catalog "${size%x*}" "${size#*x}")
		if ! "$SB" -opm "$OPM" -catalog "$dir" -label "$size" -runs 1 -load -clients 50 -calls 40 | tail -n +2; then
			failed=1
		fi
	done
fi
exit "$failed"
