#!/usr/bin/env bash
# hack/bench-template.sh: `opm alpha render-template` on a semver template
# of N bundle images (default 200) served by a local registry (Debian's
# docker-registry, plain HTTP on 127.0.0.1, reached through a
# registries.conf rewrite, as in a disconnected cluster), with a cold blob
# cache and then a warm one. Prints wall time and peak RSS (GNU time) of
# each run; every run's output must be identical.
#
# Environment:
#   BENCH_N      number of bundle images (default 200)
#   BENCH_RUNS   runs of each kind; the fastest is reported (default 3)
#   OPM          opm binary (default bin/opm, built if missing)
set -euo pipefail

cd "$(dirname "$0")/.."

N=${BENCH_N:-200}
RUNS=${BENCH_RUNS:-3}
OPM=${OPM:-bin/opm}
TIME=/usr/bin/time
REGISTRY_BIN=/usr/bin/docker-registry

die() { echo "bench-template: $*" >&2; exit 1; }
[ -x "$TIME" ] || die "GNU time not found at $TIME (Debian: apt-get install -y time)"
[ -x "$REGISTRY_BIN" ] || die "$REGISTRY_BIN not found (Debian: apt-get install -y docker-registry)"

if [ ! -x "$OPM" ]; then
	echo "bench-template: building $OPM" >&2
	go build -o "$OPM" ./cmd/opm
fi
OPM=$(realpath "$OPM")

WORK=$(mktemp -d /tmp/opm-bench-template.XXXXXX)
REG_PID=
cleanup() {
	if [ -n "$REG_PID" ]; then
		kill "$REG_PID" 2>/dev/null || true
		wait "$REG_PID" 2>/dev/null || true
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
REG=127.0.0.1:$PORT
cat > "$WORK/registry.yml" <<YML
version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $WORK/registry
http:
  addr: $REG
YML
"$REGISTRY_BIN" serve "$WORK/registry.yml" > "$WORK/registry.log" 2>&1 &
REG_PID=$!
for _ in $(seq 100); do
	curl -fsS "http://$REG/v2/" > /dev/null 2>&1 && break
	sleep 0.1
done
curl -fsS "http://$REG/v2/" > /dev/null || die "registry did not start: $(cat "$WORK/registry.log")"

echo "bench-template: pushing $N bundle images to $REG" >&2
go run ./hack/benchtemplate -registry "$REG" -n "$N" -o "$WORK"

export CONTAINERS_REGISTRIES_CONF=$WORK/registries.conf

# run KIND CACHE: render the template RUNS times, report the fastest.
run() {
	local kind=$1 best= rss= cpu=
	for i in $(seq "$RUNS"); do
		if [ "$kind" = cold ]; then rm -rf "$WORK/cache"; fi
		XDG_CACHE_HOME=$WORK/cache "$TIME" -f '%e %M %U %S' -o "$WORK/time" \
			"$OPM" alpha render-template semver "$WORK/template.yaml" > "$WORK/out.$kind.$i.json"
		read -r wall kb usr sys < "$WORK/time"
		if [ -z "$best" ] || awk -v a="$wall" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$wall rss=$kb cpu=$(awk -v u="$usr" -v s="$sys" 'BEGIN { print u + s }')
		fi
		cmp -s "$WORK/out.$kind.$i.json" "$WORK/out.cold.1.json" || die "output of $kind run $i differs from the first run"
	done
	printf '%-5s %4d images  %6.2f s wall  %6.2f s CPU  %6.1f MB peak RSS\n' "$kind" "$N" "$best" "$cpu" "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')"
}

echo "render-template semver, $N bundle images, fastest of $RUNS:"
run cold
run warm
printf 'output: %s bytes, %s channels\n' "$(wc -c < "$WORK/out.cold.1.json")" "$(grep -c '"schema": "olm.channel"' "$WORK/out.cold.1.json")"
