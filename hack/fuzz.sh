#!/usr/bin/env bash
# hack/fuzz.sh: run every fuzz target of the module (`make fuzz`).
#
# Targets are found, not listed: every `func FuzzXxx(` in a _test.go file of
# the module is one, so a new target is fuzzed without editing this script.
# Each runs for FUZZTIME. A crasher makes `go test` write the failing input
# to the package's testdata/fuzz/FuzzXxx/ directory: fix the bug and commit
# that file, it is then a regression input that `go test` (and `make unit`)
# replays. The script goes on with the other targets and exits 1 if any
# failed, naming them.
#
# Usage: hack/fuzz.sh [-l] [REGEXP]
#   -l      list the targets (package directory and name) and exit
#   REGEXP  only the targets whose "dir:FuzzName" matches (grep -E)
#
# Environment:
#   FUZZTIME   time per target (default 30s); `make fuzz-smoke` uses 3s
#   FUZZFLAGS  extra `go test` flags (e.g. "-parallel 1" on a busy machine)
#   GO         the go command (default go)
set -euo pipefail

cd "$(dirname "$0")/.."

FUZZTIME=${FUZZTIME:-30s}
FUZZFLAGS=${FUZZFLAGS:-}
GO=${GO:-go}

list=false
if [ "${1:-}" = "-l" ]; then
	list=true
	shift
fi
filter=${1:-}

# targets prints "dir:FuzzName" for every fuzz target, sorted. Test files
# under testdata/ and hidden directories are not the module's.
targets() {
	grep -rEo --include='*_test.go' --exclude-dir=testdata --exclude-dir='.?*' \
		'^func Fuzz[A-Za-z0-9_]*\(' . |
		sed -E 's|^\./||; s|/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\($|:\1|; s|^[^/:]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\($|.:\1|' |
		sort -u
}

all=$(targets)
if [ -n "$filter" ]; then
	all=$(printf '%s\n' "$all" | grep -E -- "$filter" || true)
fi
if [ -z "$all" ]; then
	echo "fuzz: no fuzz target${filter:+ matches $filter}" >&2
	exit 1
fi
if $list; then
	printf '%s\n' "$all"
	exit 0
fi

n=$(printf '%s\n' "$all" | wc -l)
echo "fuzz: $n targets, $FUZZTIME each" >&2
failed=()
while IFS=: read -r dir name; do
	echo "fuzz: $dir $name" >&2
	# shellcheck disable=SC2086 # FUZZFLAGS is a list of flags
	if ! $GO test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" $FUZZFLAGS "./$dir"; then
		failed+=("$dir:$name")
	fi
done <<<"$all"

if [ ${#failed[@]} -gt 0 ]; then
	echo "fuzz: ${#failed[@]} of $n targets failed:" >&2
	printf '  %s\n' "${failed[@]}" >&2
	echo "fuzz: the failing inputs are in each package's testdata/fuzz/<target>/; fix, then commit them" >&2
	exit 1
fi
echo "fuzz: all $n targets passed" >&2
