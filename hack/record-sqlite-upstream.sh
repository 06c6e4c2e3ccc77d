#!/usr/bin/env bash
# record-sqlite-upstream.sh UPSTREAM_OPM: run upstream opm (v1.73.0, the last
# release that reads sqlite databases) on every test database of
# pkg/sqlite/testdata and record what it printed in
# pkg/sqlite/testdata/upstream-v1.73.0 (see the README there). The
# databases are kept gzipped (*.db.gz); upstream's render migrates the
# database it reads in place, so each run gets a fresh copy.
set -euo pipefail
up=$(realpath "$1")
cd "$(dirname "$0")/../pkg/sqlite/testdata"
out=upstream-v1.73.0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"

run() { # NAME DB ARGS...: stdout to NAME.stdout, exit code to NAME.exit, stderr (no timestamps) to NAME.stderr
	local name=$1 db=$2
	shift 2
	gzip -dc "$db" >"$tmp/index.db"
	local code=0
	(cd "$tmp" && "$up" "$@") >"$out/$name.stdout" 2>"$tmp/stderr" || code=$?
	echo "$code" >"$out/$name.exit"
	sed -E 's/^time="[^"]*" //; s/^[0-9]{4}\/[0-9]{2}\/[0-9]{2} [0-9:]{8} //' "$tmp/stderr" >"$out/$name.stderr"
	[ -s "$out/$name.stderr" ] || rm "$out/$name.stderr"
}

for db in schema/*.db.gz real/*.db.gz; do
	n=$(basename "$db" .db.gz)
	run "$n.render-json" "$db" render index.db
done
# the large real database's output is kept gzipped
gzip -9nf "$out/bundles.render-json.stdout"
for db in schema/v13.db.gz schema/v08.db.gz real/foo-index.db.gz; do
	n=$(basename "$db" .db.gz)
	run "$n.render-yaml" "$db" render -o yaml index.db
	run "$n.render-csvmetadata" "$db" render --migrate-level bundle-object-to-csv-metadata index.db
	# migrate: the tree it writes, as one file per package: NAME.migrate/PKG/catalog.json
	rm -rf "$tmp/out" "$out/$n.migrate"
	run "$n.migrate" "$db" migrate index.db out
	mv "$tmp/out" "$out/$n.migrate"
done
