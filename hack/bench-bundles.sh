#!/usr/bin/env bash
# hack/bench-bundles.sh: `opm bundle validate` on a tree of real bundles
# (part of `make bench`): bundles, CPU time (user+sys), CPU per bundle,
# bundles per CPU second and per wall second, peak RSS, and how many
# bundles fail. CPU time is the figure to compare on a shared machine.
#
# Bundles: BENCH_BUNDLES, directories searched as opm bundle validate
# searches them (a community-operators or certified-operators checkout:
# operators/<package>/<version>/). Default: the bundle/ cases of
# ../shared/conformance (53 real bundles) when it is beside the repository;
# without either, nothing is measured and the script says so.
#
# Environment:
#   BENCH_BUNDLES  space-separated directories of bundles
#   BENCH_RUNS     runs per directory; the fastest is reported (default 1)
#   BENCH_ARGS     extra flags (e.g. "--select-optional suite=operatorframework")
#   OPM            opm binary (default bin/opm, built if missing)
set -euo pipefail

cd "$(dirname "$0")/.."

BENCH_RUNS=${BENCH_RUNS:-1}
OPM=${OPM:-bin/opm}
TIME=/usr/bin/time

die() { echo "bench-bundles: $*" >&2; exit 1; }

[ -x "$TIME" ] || die "GNU time not found at $TIME (Debian: apt-get install -y time)"
if [ ! -x "$OPM" ]; then
	echo "bench-bundles: building $OPM" >&2
	go build -o "$OPM" ./cmd/opm
fi

if [ -z "${BENCH_BUNDLES:-}" ]; then
	if [ -d ../shared/conformance/bundle ]; then
		BENCH_BUNDLES=../shared/conformance/bundle
	else
		echo "bench-bundles: no bundles to measure: set BENCH_BUNDLES to a checkout of community-operators-prod (operators/), or put ../shared/conformance beside the repository; nothing measured" >&2
		exit 0
	fi
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

printf '%-40s %8s %8s %8s %10s %10s %10s %12s %8s\n' bundles count "wall s" "CPU s" "CPU ms/b" "b/CPU s" "b/wall s" "peak RSS MB" invalid
failed=0
read -r -a args <<<"${BENCH_ARGS:-}"
for dir in $BENCH_BUNDLES; do
	best="" cpu="" rss=0
	for ((i = 0; i < BENCH_RUNS; i++)); do
		# Exit status 1 is an invalid bundle among them, not a failure.
		status=0
		"$TIME" -f '%e %M %U %S' -o "$tmp/time" "$OPM" bundle validate "$dir" "${args[@]}" >"$tmp/out.txt" 2>"$tmp/stderr" || status=$?
		if [ "$status" -gt 1 ]; then
			echo "bench-bundles: FAILED (exit $status): $OPM bundle validate $dir" >&2
			tail -n 20 "$tmp/stderr" >&2
			failed=1
			continue 2
		fi
		# GNU time writes "Command exited with non-zero status 1" first.
		read -r wall kb usr sys < <(tail -n 1 "$tmp/time")
		if [ -z "$best" ] || awk -v a="$wall" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$wall
			cpu=$(awk -v u="$usr" -v s="$sys" 'BEGIN { print u + s }')
		fi
		if [ "$kb" -gt "$rss" ]; then rss=$kb; fi
	done
	# The summary line: "N bundles: M invalid; ..." (one bundle: "bundle X: valid|invalid").
	line=$(tail -n 1 "$tmp/stderr")
	if [[ $line =~ ^([0-9]+)\ bundles:\ ([0-9]+)\ invalid ]]; then
		n=${BASH_REMATCH[1]} bad=${BASH_REMATCH[2]}
	else
		n=1 bad=0
		[[ $line == *": invalid:"* ]] && bad=1
	fi
	awk -v d="$dir" -v n="$n" -v w="$best" -v c="$cpu" -v kb="$rss" -v bad="$bad" 'BEGIN {
		printf "%-40s %8d %8.2f %8.2f %10.1f %10.1f %10.1f %12.0f %8d\n", d, n, w, c, (n ? 1000 * c / n : 0), (c > 0 ? n / c : 0), (w > 0 ? n / w : 0), kb / 1024, bad }'
done
echo
echo "opm: $("$OPM" version 2>/dev/null | head -n 1)"
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), runs per directory: $BENCH_RUNS"
exit "$failed"
