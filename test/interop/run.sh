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

# VERSIONS are the protocol revisions every conformance step runs at.
VERSIONS=(2025-11-25 2026-07-28)

# conformance TARGET URL TOKEN VERSION SCENARIO... runs the scenarios at
# VERSION against URL and judges them (allow-list target TARGET@VERSION).
conformance() {
	local target=$1 url=$2 token=$3 version=$4 s status=0
	shift 4
	echo "-- $target at $version (${#@} scenarios)"
	for s in "$@"; do
		scenario "$url" "$token" "$RESULTS/$target@$version" "$s" "$version" || true
	done
	"$NODE" "$HERE/check-results.mjs" "$target@$version" "$RESULTS/$target@$version" "$HERE/allow-list.txt" "$@" || status=$?
	verdict "conformance: $target at $version" "$status"
}

# 1. Every server scenario of the suite, at each version, against the
# fixture server.
echo "== conformance suite against examples/everything"
token=$(new_token)
EVERYTHING_AUTH_TOKEN=$token start_server "$RESULTS/everything.log" "$WORK/everything" -addr 127.0.0.1:0
echo "fixture at $SERVER_URL (pid $SERVER_PID)"
for v in "${VERSIONS[@]}"; do
	mapfile -t ALL < <(scenarios_of "$v")
	if [ "${#ALL[@]}" -lt 30 ]; then
		echo "interop: the suite listed only ${#ALL[@]} server scenarios at $v" >&2
		exit 1
	fi
	conformance fixture "$SERVER_URL" "$token" "$v" "${ALL[@]}"
done
# The tasks extension's scenarios are on no spec timeline: --force runs
# them at 2026-07-28 (the fixture serves the extension as rigout serve does,
# with Gateway.TasksHTTP, and carries greet, slow_compute and failing_job).
mapfile -t TASKS < <("$NODE" "$CONFORMANCE" list --server | sed -n 's/^  - \(tasks-[^ ]*\) \[extension\].*/\1/p')
echo "-- fixture, tasks extension at 2026-07-28 (${#TASKS[@]} scenarios)"
for s in "${TASKS[@]}"; do
	scenario "$SERVER_URL" "$token" "$RESULTS/fixture-tasks@2026-07-28" "$s" 2026-07-28 --force || true
done
status=0
"$NODE" "$HERE/check-results.mjs" fixture-tasks@2026-07-28 "$RESULTS/fixture-tasks@2026-07-28" "$HERE/allow-list.txt" "${TASKS[@]}" || status=$?
verdict "conformance: fixture, tasks extension at 2026-07-28" "$status"
stop_all

# 2. The scenarios that need no fixtures against the real binary, with
# bearer auth on (stateful, then stateless), and 3. the Inspector CLI
# against the stateful server. GENERIC_<version> are the scenarios whose
# requirements rigout's own tools can meet (the others call the suite's
# test tools, prompts or resources, which only the fixture offers).
GENERIC_2025_11_25=(server-initialize ping logging-set-level tools-list server-sse-multiple-streams server-sse-polling dns-rebinding-protection)
GENERIC_2026_07_28=(server-stateless tools-list server-sse-multiple-streams dns-rebinding-protection caching
	http-header-validation sep-2164-resource-not-found input-required-result-missing-input-response
	input-required-result-unsupported-methods input-required-result-ignore-extra-params input-required-result-validate-input)
generic() { # TARGET URL TOKEN: every version's generic scenarios
	local v list
	for v in "${VERSIONS[@]}"; do
		list="GENERIC_${v//-/_}[@]"
		conformance "$1" "$2" "$3" "$v" "${!list}"
	done
}
echo "== conformance suite against rigout serve"
token=$(new_token)
RIGOUT_STATE_DIR="$WORK/state-serve" RIGOUT_AUTH_TOKEN=$token \
	start_server "$RESULTS/rigout-serve.log" "$WORK/rigout" serve --addr 127.0.0.1:0
echo "rigout serve at $SERVER_URL (pid $SERVER_PID)"
generic rigout "$SERVER_URL" "$token"

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
generic rigout-stateless "$SERVER_URL" "$token"
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

# 5. The official Go SDK client (its own module, gosdk/) against the
# binary over streamable HTTP, at 2026-07-28 and 2025-11-25.
echo "== Go SDK client against rigout serve (HTTP)"
status=0
(cd "$HERE/gosdk" && RIGOUT_BIN="$WORK/rigout" TMPDIR="$WORK" timeout 300 go test -count=1 -v .) \
	>"$RESULTS/gosdk.log" 2>&1 || status=$?
grep -E '^(=== RUN|--- |\s+--- |ok|FAIL|PASS)|_test.go:' "$RESULTS/gosdk.log" | grep -v '=== RUN' | sed 's/^/  /'
verdict "go sdk client: http" "$status"

# 6. A real client CLI: Claude Code registers the server with `claude mcp
# add` and `claude mcp list` connects to it (no model needed), in a HOME of
# its own. With the right token it must report the server connected; with a
# wrong one, not.
echo "== Claude Code CLI (claude mcp add, claude mcp list) against rigout serve"
claude_list() { # NAME TOKEN: prints what `claude mcp list` said
	local home="$WORK/claude-$1"
	mkdir -p "$home/project"
	(cd "$home/project" &&
		export HOME="$home" DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 PATH="$NODE_BIN:$PATH" &&
		timeout 60 "$HERE/node_modules/.bin/claude" mcp add --transport http rigout "$SERVER_URL" --header "Authorization: Bearer $2" &&
		timeout 60 "$HERE/node_modules/.bin/claude" mcp list) >"$RESULTS/claude-$1.log" 2>&1 || true
}
token=$(new_token)
RIGOUT_STATE_DIR="$WORK/state-claude" RIGOUT_AUTH_TOKEN=$token \
	start_server "$RESULTS/rigout-claude.log" "$WORK/rigout" serve --addr 127.0.0.1:0
claude_list token "$token"
claude_list wrong-token "$(new_token)"
stop_all
status=0
if grep -q "^rigout: $SERVER_URL (HTTP) - .*Connected" "$RESULTS/claude-token.log"; then
	echo "  claude mcp list with the token: connected"
else
	echo "  claude mcp list with the token: FAILED (not connected); output:"
	sed 's/^/    /' "$RESULTS/claude-token.log"
	status=1
fi
if grep -q "^rigout: " "$RESULTS/claude-wrong-token.log" && ! grep -q "^rigout: .*Connected" "$RESULTS/claude-wrong-token.log"; then
	echo "  claude mcp list with a wrong token: not connected ($(grep -o -- '- .*' "$RESULTS/claude-wrong-token.log" | tail -1))"
else
	echo "  claude mcp list with a wrong token: FAILED (want listed and not connected); output:"
	sed 's/^/    /' "$RESULTS/claude-wrong-token.log"
	status=1
fi
verdict "claude code cli: mcp add + list" "$status"

echo "== summary ($((SECONDS - started))s; details in $RESULTS)"
for n in "${PASSED[@]}"; do echo "  ok    $n"; done
for n in "${FAILED[@]}"; do echo "  FAIL  $n"; done
echo "interop: ${#PASSED[@]} passed, ${#FAILED[@]} failed"
[ "${#FAILED[@]}" -eq 0 ]
