#!/usr/bin/env bash
# hack/bench-build.sh: time and peak RSS of `opm build catalog` on a large
# catalog (default: the largest of ../shared/conformance), into an OCI
# layout and, when Debian's docker-registry is installed, pushed to a local
# distribution registry (plain HTTP on 127.0.0.1, stopped on exit). Checks
# along the way that two builds give one digest and that the pushed image
# renders as the directory does.
#
# Environment:
#   CATALOG  catalog directory (default: the largest conformance catalog)
#   OPM      opm binary (default bin/opm, built if missing)
set -euo pipefail

cd "$(dirname "$0")/.."

OPM=${OPM:-bin/opm}
CATALOG=${CATALOG:-../shared/conformance/catalog/community-operators-prod-v4.20/input}
TIME=/usr/bin/time
REGISTRY_BIN=/usr/bin/docker-registry

die() { echo "bench-build: $*" >&2; exit 1; }

[ -x "$TIME" ] || die "GNU time not found at $TIME (Debian: apt-get install -y time)"
[ -d "$CATALOG" ] || { echo "bench-build: skipping: no catalog at $CATALOG" >&2; exit 0; }
if [ ! -x "$OPM" ]; then
	echo "bench-build: building $OPM" >&2
	go build -o "$OPM" ./cmd/opm
fi
OPM=$(cd "$(dirname "$OPM")" && pwd)/$(basename "$OPM")

work=$(mktemp -d "${TMPDIR:-/tmp}/opm-bench-build.XXXXXX")
reg_pid=
cleanup() {
	if [ -n "$reg_pid" ]; then kill "$reg_pid" 2>/dev/null || true; wait "$reg_pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

size=$(du -sb "$CATALOG" | cut -f1)
printf 'catalog: %s (%.1f MB)\n' "$CATALOG" "$(echo "$size / 1000000" | bc -l)"
printf '%-44s %8s %8s %9s  %s\n' run wall cpu peakRSS digest

# measure NAME ARGS...: run opm ARGS, print wall, user+sys, peak RSS and
# the digest it printed; the digest is left in $digest.
measure() {
	local name=$1
	shift
	"$TIME" -f '%e %U %S %M' -o "$work/time" "$OPM" "$@" > "$work/out"
	digest=$(head -n1 "$work/out")
	read -r wall user sys rss < "$work/time"
	printf '%-44s %7.2fs %7.2fs %7.0fMB  %s\n' "$name" "$wall" "$(echo "$user + $sys" | bc -l)" "$(echo "$rss / 1024" | bc -l)" "${digest:0:19}"
}

measure "scratch -> oci layout" build catalog "$CATALOG" -i scratch -t "oci:$work/layout:v1"
first=$digest
measure "scratch -> oci layout, again" build catalog "$CATALOG" -i scratch -t "oci:$work/layout:v2"
[ "$digest" = "$first" ] || die "two builds gave $first and $digest"
measure "scratch -> oci layout, --skip-validate" build catalog "$CATALOG" -i scratch --skip-validate -t "oci:$work/layout:v3"
measure "scratch -> oci-archive" build catalog "$CATALOG" -i scratch -t "oci-archive:$work/catalog.tar"

if [ ! -x "$REGISTRY_BIN" ]; then
	echo "bench-build: $REGISTRY_BIN not found: no registry runs (apt-get install docker-registry)" >&2
	exit 0
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$work/registry.yml" <<EOF
version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $work/registry
http:
  addr: 127.0.0.1:$port
EOF
"$REGISTRY_BIN" serve "$work/registry.yml" > "$work/registry.log" 2>&1 &
reg_pid=$!
for _ in $(seq 50); do
	curl -fs "http://127.0.0.1:$port/v2/" > /dev/null && break
	sleep 0.1
done
host=127.0.0.1:$port
cache=$work/cache

measure "scratch -> registry" build catalog "$CATALOG" -i scratch -t "$host/catalog:scratch" --cache-dir "$cache"
[ "$digest" = "$first" ] || die "the pushed image has digest $digest, the layout $first"
# Any image serves as a base; the first one, pushed, is one.
measure "registry base -> registry (other repo)" build catalog "$CATALOG" -i "$host/catalog:scratch" -t "$host/on-base:v1" --cache-dir "$cache"
measure "render the pushed image" render "$host/on-base:v1" --cache-dir "$cache"
cp "$work/out" "$work/image.json"
"$OPM" render "$CATALOG" > "$work/dir.json"
cmp -s "$work/image.json" "$work/dir.json" || die "the pushed image renders differently from the directory"
echo "bench-build: two builds gave one digest; the pushed image renders as the directory"
