# hack/lib-catalog.sh: sourced by the hack/bench*.sh scripts. Builds
# internal/gencatalog into $BENCH_DIR and defines
#
#   bench_catalog P B   generate (or reuse) the P packages x B bundles
#                       catalog and print its directory
#
# Generated catalogs are cached in $BENCH_DIR under a key that is a checksum
# of the generator's source (tests excluded), so every script shares them
# and a changed generator makes new ones. Needs BENCH_DIR; messages are
# prefixed with $BENCH_NAME (default "bench").

mkdir -p "$BENCH_DIR"
BENCH_GEN="$BENCH_DIR/gencatalog"
go build -o "$BENCH_GEN" ./internal/gencatalog/cmd/gencatalog
BENCH_GENKEY=$(for f in internal/gencatalog/*.go; do
	case $f in *_test.go) ;; *) cat "$f" ;; esac
done | cksum | cut -d' ' -f1)

bench_catalog() {
	local dir="$BENCH_DIR/$1x$2-$BENCH_GENKEY"
	if [ ! -d "$dir" ]; then
		echo "${BENCH_NAME:-bench}: generating $1 x $2 catalog in $dir" >&2
		# Drop catalogs of this size made by older generators.
		rm -rf "$BENCH_DIR/$1x$2"-* "$dir.tmp"
		"$BENCH_GEN" -packages "$1" -bundles "$2" -o "$dir.tmp" -q
		mv "$dir.tmp" "$dir"
	fi
	echo "$dir"
}
