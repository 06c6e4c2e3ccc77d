#!/usr/bin/env bash
# record-index-upstream.sh UPSTREAM_OPM REGISTRY: run upstream opm v1.73.0's
# `opm index add --generate` on the scenarios of
# pkg/index/testdata/upstream-v1.73.0/scenarios.txt and record what it did
# (see the README there).
#
# REGISTRY is a plain-HTTP registry on 127.0.0.1 (e.g. Debian's
# docker-registry, addr 127.0.0.1:5111): the conformance bundles
# (../shared/conformance/bundle) are pushed there as bundle images with this
# repository's opm (bin/opm: make build), and the database of each step is
# pushed there as an sqlite index image (curl, with the registry API), which
# the next step's --from-index names. The recordings keep REGISTRY as it
# was: the tests map it to their own registry.
set -euo pipefail
up=$(realpath "$1")
reg=$2
root=$(cd "$(dirname "$0")/.." && pwd)
opm=$root/bin/opm
bundles=$root/../shared/conformance/bundle
out=$root/pkg/index/testdata/upstream-v1.73.0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# bundle NAME: the image of a conformance bundle, pushed once.
declare -A pushed
bundle() {
	local dir
	case $1 in
	foo-*) dir=upstream-foo-bundle-v${1#foo-} ;;
	bar-*) dir=upstream-bar-bundle-v${1#bar-} ;;
	baz-*) dir=upstream-baz-bundle-v${1#baz-} ;;
	etcd-*) dir=upstream-etcd.${1#etcd-} ;;
	prom-*) dir=upstream-prometheus.${1#prom-} ;;
	argo-*) dir=argocd-operator@${1#argo-} ;;
	*) echo "unknown bundle $1" >&2; exit 1 ;;
	esac
	local ref=$reg/bundles/$1:v1
	if [ -z "${pushed[$1]:-}" ]; then
		"$opm" build bundle "$bundles/$dir/input" -t "$ref" >/dev/null
		pushed[$1]=1
	fi
	echo "$ref"
}

# pushdb REF DB: push DB as an sqlite index image (/database/index.db).
pushdb() {
	local ref=$1 db=$2 repo tag
	repo=${ref#"$reg"/}; tag=${repo##*:}; repo=${repo%:*}
	mkdir -p "$tmp/img/database" && cp "$db" "$tmp/img/database/index.db"
	tar --sort=name --mtime=@0 --owner=0 --group=0 -C "$tmp/img" -cf "$tmp/layer.tar" database
	gzip -9nc "$tmp/layer.tar" >"$tmp/layer.tar.gz"
	local diff layer cfg size csize
	diff=sha256:$(sha256sum <"$tmp/layer.tar" | cut -d' ' -f1)
	layer=sha256:$(sha256sum <"$tmp/layer.tar.gz" | cut -d' ' -f1)
	size=$(stat -c %s "$tmp/layer.tar.gz")
	printf '{"architecture":"amd64","os":"linux","config":{"Labels":{"operators.operatorframework.io.index.database.v1":"/database/index.db"}},"rootfs":{"type":"layers","diff_ids":["%s"]}}' "$diff" >"$tmp/config.json"
	cfg=sha256:$(sha256sum <"$tmp/config.json" | cut -d' ' -f1)
	csize=$(stat -c %s "$tmp/config.json")
	upload() { # FILE DIGEST
		local loc
		loc=$(curl -fsSi -X POST "http://$reg/v2/$repo/blobs/uploads/" | tr -d '\r' | sed -n 's/^[Ll]ocation: //p')
		case $loc in http*) ;; *) loc=http://$reg$loc ;; esac
		case $loc in *\?*) loc=$loc\&digest=$2 ;; *) loc=$loc?digest=$2 ;; esac
		curl -fsS -X PUT -H 'Content-Type: application/octet-stream' --data-binary @"$1" "$loc" >/dev/null
	}
	upload "$tmp/layer.tar.gz" "$layer"
	upload "$tmp/config.json" "$cfg"
	printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"%s","size":%s}]}' "$cfg" "$csize" "$layer" "$size" >"$tmp/manifest.json"
	curl -fsS -X PUT -H 'Content-Type: application/vnd.oci.image.manifest.v1+json' --data-binary @"$tmp/manifest.json" "http://$reg/v2/$repo/manifests/$tag" >/dev/null
	rm -rf "$tmp/img" "$tmp/layer.tar" "$tmp/layer.tar.gz"
}

grep -v '^#' "$out/scenarios.txt" | while read -r name mode keep rest; do
	d=$out/$name
	rm -rf "$d" && mkdir -p "$d"
	echo "$mode" >"$d/mode"
	IFS='|' read -ra steps <<<"$rest"
	i=0 from=""
	for s in "${steps[@]}"; do
		i=$((i + 1))
		list=""
		for b in $(echo "$s" | tr ',' ' '); do list=$list${list:+,}$(bundle "$b"); done
		echo "$list" >"$d/step$i.bundles"
		w=$tmp/$name-$i && mkdir -p "$w"
		code=0
		(cd "$w" && "$up" index add --use-http --pull-tool none --mode "$mode" ${from:+--from-index "$from"} --bundles "$list" --generate >/dev/null 2>stderr) || code=$?
		echo "$code" >"$d/step$i.exit"
		if [ "$code" != 0 ]; then
			sed -E 's/^time="[^"]*" //' "$w/stderr" | grep '^Error: ' >"$d/step$i.stderr" || true
			break
		fi
		# renders kept: every step for "all", the last step for "last"
		if [ "$keep" = all ] || [ "$i" = "${#steps[@]}" ]; then
			"$up" render "$w/database/index.db" >"$d/step$i.render.json" 2>/dev/null
			[ "$(stat -c %s "$d/step$i.render.json")" -lt 20000 ] || gzip -9n "$d/step$i.render.json"
		fi
		# the database the last step adds to, for the sqlite --from-index test
		if [ "$i" = "$((${#steps[@]} - 1))" ]; then
			gzip -9nc "$w/database/index.db" >"$d/step$i.db.gz"
		fi
		from=$reg/index/$name:step$i
		pushdb "$from" "$w/database/index.db"
	done
done
