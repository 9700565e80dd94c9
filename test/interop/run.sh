#!/usr/bin/env bash
# Interop tests: rigout against an MCP conformance suite, SDK client and
# Inspector that no one here wrote. See README.md for what runs and how to
# read the results. Needs `npm ci` in this folder first; runs as any user,
# without a terminal, in a few minutes. Exits non-zero on any failure not
# listed in allow-list.txt.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rigout-interop.XXXXXX")
RESULTS="$HERE/results"
# shellcheck source=lib.sh
. "$HERE/lib.sh"

cleanup() {
	stop_all
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

need_node
rm -rf "$RESULTS"
mkdir -p "$RESULTS"
unset RIGOUT_CONFIG RIGOUT_ADDR RIGOUT_PUBLIC_URL
started=$SECONDS

# Each step's verdict, for the closing summary.
PASSED=()
FAILED=()
verdict() { # NAME STATUS
	if [ "$2" -eq 0 ]; then PASSED+=("$1"); else FAILED+=("$1"); fi
}

echo "== build"
build_go "$WORK/everything" ./examples/everything
build_go "$WORK/rigout" ./cmd/rigout
"$NODE" --version

# 1. Every server scenario of the suite against the fixture server.
echo "== conformance suite against examples/everything"
mapfile -t ALL < <("$NODE" "$CONFORMANCE" list --server | sed -n 's/^  - \([^ ]*\).*/\1/p')
if [ "${#ALL[@]}" -lt 30 ]; then
	echo "interop: the suite listed only ${#ALL[@]} server scenarios" >&2
	exit 1
fi
token=$(new_token)
EVERYTHING_AUTH_TOKEN=$token start_server "$RESULTS/everything.log" "$WORK/everything" -addr 127.0.0.1:0
echo "fixture at $SERVER_URL (pid $SERVER_PID), ${#ALL[@]} scenarios"
for s in "${ALL[@]}"; do
	scenario "$SERVER_URL" "$token" "$RESULTS/fixture" "$s" || true
done
status=0
"$NODE" "$HERE/check-results.mjs" fixture "$RESULTS/fixture" "$HERE/allow-list.txt" "${ALL[@]}" || status=$?
verdict "conformance: examples/everything" "$status"
stop_all

# 2. The scenarios that need no fixtures against the real binary, with
# bearer auth on (stateful, then stateless), and 3. the Inspector CLI
# against the stateful server.
echo "== conformance suite against rigout serve"
GENERIC=(server-initialize ping logging-set-level tools-list server-sse-multiple-streams server-sse-polling dns-rebinding-protection)
token=$(new_token)
RIGOUT_STATE_DIR="$WORK/state-serve" RIGOUT_AUTH_TOKEN=$token \
	start_server "$RESULTS/rigout-serve.log" "$WORK/rigout" serve --addr 127.0.0.1:0
echo "rigout serve at $SERVER_URL (pid $SERVER_PID)"
for s in "${GENERIC[@]}"; do
	scenario "$SERVER_URL" "$token" "$RESULTS/rigout" "$s" || true
done
status=0
"$NODE" "$HERE/check-results.mjs" rigout "$RESULTS/rigout" "$HERE/allow-list.txt" "${GENERIC[@]}" || status=$?
verdict "conformance: rigout serve" "$status"

echo "== Inspector CLI against rigout serve and rigout stdio"
# The Inspector CLI finds its own package.json relative to the working
# directory (../package.json), so it runs from results/, below this folder.
inspector() { # NAME EXPECT(ok|fail) PATTERN ARGS...
	local name=$1 expect=$2 pattern=$3 out="$RESULTS/inspector-$1.json" rc=0
	shift 3
	(cd "$RESULTS" && PATH="$NODE_BIN:$PATH" timeout 60 "$NODE" "$HERE/node_modules/.bin/mcp-inspector-cli" --cli "$@") \
		>"$out" 2>"$RESULTS/inspector-$name.err" || rc=$?
	if { [ "$expect" = ok ] && [ "$rc" -eq 0 ] && grep -q -- "$pattern" "$out"; } ||
		{ [ "$expect" = fail ] && [ "$rc" -ne 0 ] && grep -q -- "$pattern" "$RESULTS/inspector-$name.err"; }; then
		echo "  inspector $name: ok"
		verdict "inspector: $name" 0
	else
		echo "  inspector $name: FAILED (exit $rc; want $expect and /$pattern/); output:"
		sed 's/^/    /' "$out" "$RESULTS/inspector-$name.err" | tail -20
		verdict "inspector: $name" 1
	fi
}
auth=(--transport http --header "Authorization: Bearer $token")
inspector http-tools-list ok '"name": "execute_command"' "$SERVER_URL" "${auth[@]}" --method tools/list
inspector http-tools-call ok '"stdout": "hi\\n"' "$SERVER_URL" "${auth[@]}" \
	--method tools/call --tool-name execute_command --tool-arg 'command=echo hi'
inspector http-no-token fail 'unauthorized' "$SERVER_URL" --transport http --method tools/list
stop_all

echo "== conformance suite against rigout serve --stateless"
token=$(new_token)
RIGOUT_STATE_DIR="$WORK/state-stateless" RIGOUT_AUTH_TOKEN=$token \
	start_server "$RESULTS/rigout-stateless.log" "$WORK/rigout" serve --addr 127.0.0.1:0 --stateless
echo "rigout serve --stateless at $SERVER_URL (pid $SERVER_PID)"
for s in "${GENERIC[@]}"; do
	scenario "$SERVER_URL" "$token" "$RESULTS/rigout-stateless" "$s" || true
done
status=0
"$NODE" "$HERE/check-results.mjs" rigout-stateless "$RESULTS/rigout-stateless" "$HERE/allow-list.txt" "${GENERIC[@]}" || status=$?
verdict "conformance: rigout serve --stateless" "$status"
stop_all
inspector stdio-tools-call ok '"stdout": "hi\\n"' "$WORK/rigout" stdio --state-dir "$WORK/state-inspector" \
	--method tools/call --tool-name execute_command --tool-arg 'command=echo hi'

# 4. The official TypeScript SDK client against the binary, stdio and HTTP.
echo "== TypeScript SDK client against rigout (stdio and HTTP)"
status=0
(cd "$HERE" && RIGOUT_BIN="$WORK/rigout" TMPDIR="$WORK" timeout 300 "$NODE" --test --test-reporter=spec sdk-e2e.mjs) \
	>"$RESULTS/sdk-e2e.log" 2>&1 || status=$?
sed 's/^/  /' "$RESULTS/sdk-e2e.log"
verdict "sdk client: stdio and http" "$status"

echo "== summary ($((SECONDS - started))s; details in $RESULTS)"
for n in "${PASSED[@]}"; do echo "  ok    $n"; done
for n in "${FAILED[@]}"; do echo "  FAIL  $n"; done
echo "interop: ${#PASSED[@]} passed, ${#FAILED[@]} failed"
[ "${#FAILED[@]}" -eq 0 ]
