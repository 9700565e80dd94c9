#!/usr/bin/env bash
# Measures how often the notification scenarios pass: runs the conformance
# scenarios tools-call-with-progress and tools-call-with-logging RUNS times
# each (default 10) against a fresh examples/everything, started with any
# FLAGS given after the run count, and prints the pass rate of each.
#
#   ./race.sh            # 10 runs of each
#   ./race.sh 30         # 30 runs of each
#
# A measurement, not a test: it exits 0 whatever the rates.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rigout-race.XXXXXX")
# shellcheck source=lib.sh
. "$HERE/lib.sh"
trap 'stop_all; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

runs=${1:-10}
shift || true
need_node
build_go "$WORK/everything" ./examples/everything
token=$(new_token)
EVERYTHING_AUTH_TOKEN=$token start_server "$WORK/everything.log" "$WORK/everything" -addr 127.0.0.1:0 "$@"
echo "fixture flags: ${*:-(none)}"
for s in tools-call-with-progress tools-call-with-logging; do
	pass=0
	marks=""
	for i in $(seq 1 "$runs"); do
		if scenario "$SERVER_URL" "$token" "$WORK/results-$i" "$s"; then
			pass=$((pass + 1))
			marks+="P"
		else
			marks+="F"
			why=$(grep -h -o '"errorMessage": "[^"]*"' "$WORK/results-$i"/server-"$s"-*/checks.json 2>/dev/null | head -1)
			echo "  run $i of $s failed: ${why:-see $WORK/results-$i/$s.log}"
		fi
	done
	echo "$s: passed $pass of $runs ($marks)"
done
