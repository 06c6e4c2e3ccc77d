#!/usr/bin/env bash
# Re-vendors the graph layout library of `opm view` (pkg/view/static):
# @dagrejs/dagre's self-contained browser build (graphlib included, global
# `dagre`), its licence, and the version and checksum recorded in
# pkg/view/static/dagre.VERSION. Needs npm and the npm registry.
#
#   bash hack/vendor-dagre.sh            # the version in dagre.VERSION
#   bash hack/vendor-dagre.sh 3.2.0      # another version
set -euo pipefail
cd "$(dirname "$0")/.."
dst=pkg/view/static
version=${1:-$(sed -n 's/^version: //p' "$dst/dagre.VERSION")}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "@dagrejs/dagre@$version" >/dev/null && tar xzf ./*.tgz)
sum=$(sha256sum "$tmp"/*.tgz | cut -d' ' -f1)
# The source map is not shipped: drop the comment that would make devtools
# ask for it.
grep -v '^//# sourceMappingURL=' "$tmp/package/dist/dagre.min.js" > "$dst/dagre.min.js"
cp "$tmp/package/LICENSE" "$dst/dagre.LICENSE"
cat > "$dst/dagre.VERSION" <<EOT
package: @dagrejs/dagre
version: $version
file: dist/dagre.min.js (sourceMappingURL comment removed)
licence: MIT (dagre.LICENSE)
tarball sha256: $sum
re-vendor: bash hack/vendor-dagre.sh [VERSION]
EOT
echo "vendored @dagrejs/dagre $version into $dst"
