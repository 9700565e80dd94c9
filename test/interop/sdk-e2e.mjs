// End-to-end test of the real rigout binary with the official TypeScript
// MCP SDK client, over stdio (`rigout stdio`) and over streamable HTTP
// (`rigout serve` with a bearer token). Run with Node's test runner:
//
//   RIGOUT_BIN=/path/to/rigout node --test sdk-e2e.mjs
//
// Each transport gets its own state directory and, for HTTP, its own
// loopback port and token. Every process started here is stopped by its PID
// when the tests end.
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const bin = process.env.RIGOUT_BIN;
if (!bin) {
  throw new Error("set RIGOUT_BIN to the rigout binary");
}

// The sentinel protected root every refusal test aims at, and the config
// file that protects it.
const sentinelRoot = mkdtempSync(join(tmpdir(), "rigout-sdk-sentinel-"));
writeFileSync(join(sentinelRoot, "keep"), "x");
const configFile = join(mkdtempSync(join(tmpdir(), "rigout-sdk-config-")), "rigout.json");
writeFileSync(configFile, JSON.stringify({ policy: { protected_roots: ["/", sentinelRoot] } }));

function text(result) {
  return (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
}

// startServe starts `rigout serve` on a free loopback port and resolves to
// its MCP URL once it prints "listening on URL".
function startServe(env) {
  const child = spawn(bin, ["serve", "--addr", "127.0.0.1:0", "--enable-system-tools"], { env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  const url = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`rigout serve did not start in 15s:\n${stderr}`)), 15000);
    child.stderr.on("data", (b) => {
      stderr += b;
      const m = /listening on (http:\/\/\S+)/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`rigout serve exited with ${code}:\n${stderr}`));
    });
  });
  return { child, url, stderr: () => stderr };
}

// stop ends a child process by its PID: SIGTERM, then SIGKILL after 5s.
async function stop(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
  await exited;
  clearTimeout(timer);
}

// The checks every transport must pass. connect returns a connected client.
function suite(name, setup) {
  describe(name, () => {
    let client;
    let teardown = async () => {};
    before(async () => {
      ({ client, teardown } = await setup());
    });
    after(async () => {
      await client?.close().catch(() => {});
      await teardown();
    });

    const call = (args, tool = "execute_command") => client.callTool({ name: tool, arguments: args });

    test("initialize", () => {
      const info = client.getServerVersion();
      assert.equal(info.name, "rigout");
      assert.ok(info.version, "server version");
      assert.ok(client.getServerCapabilities()?.tools, "tools capability");
      assert.match(client.getInstructions() ?? "", /execute_command/);
    });

    test("tools/list", async () => {
      const { tools } = await client.listTools();
      const exec = tools.find((t) => t.name === "execute_command");
      assert.ok(exec, `execute_command in ${tools.map((t) => t.name)}`);
      assert.ok(exec.description.length > 20);
      assert.equal(exec.inputSchema.type, "object");
      assert.ok(exec.inputSchema.properties.command);
      assert.ok(exec.outputSchema, "execute_command declares an output schema");
      for (const t of tools) {
        assert.ok(t.description, `${t.name} has a description`);
      }
    });

    test("execute_command echo hi", async () => {
      const res = await call({ command: "echo hi" });
      assert.notEqual(res.isError, true, text(res));
      assert.equal(res.structuredContent.exit_code, 0);
      assert.equal(res.structuredContent.stdout, "hi\n");
      assert.match(text(res), /\bhi\b/);
    });

    test("execute_command argv", async () => {
      const res = await call({ argv: ["printf", "%s-%s", "a b", "c"] });
      assert.notEqual(res.isError, true, text(res));
      assert.equal(res.structuredContent.stdout, "a b-c");
    });

    test("non-zero exit is an error result", async () => {
      const res = await call({ command: "echo oops >&2; exit 3" });
      assert.equal(res.isError, true);
      assert.equal(res.structuredContent.exit_code, 3);
      assert.equal(res.structuredContent.stderr, "oops\n");
      assert.match(text(res), /exit code: 3/);
    });

    test("schema violation is refused before anything runs", async () => {
      const res = await call({ command: "echo should-not-run", timeout: "soon" });
      assert.equal(res.isError, true);
      assert.match(text(res), /timeout/);
      assert.doesNotMatch(text(res), /should-not-run\n/);
      const none = await call({});
      assert.equal(none.isError, true);
      assert.match(text(none), /command/);
    });

    test("unknown tool is a protocol error", async () => {
      await assert.rejects(call({}, "no_such_tool"), /no_such_tool|not found|unknown/i);
    });

    test("destructive command is refused by a policy rule", async (t) => {
      // Aimed at a sentinel directory configured as a protected root, so the
      // test is harmless if the refusal fails: the worst it can delete is the
      // sentinel, which the test then finds missing.
      const res = await call({ command: `rm -rf ${sentinelRoot}` });
      t.diagnostic(text(res));
      assert.equal(res.isError, true, text(res));
      assert.match(text(res), /rule recursive-delete-root/, text(res));
      assert.equal(res.structuredContent?.exit_code, undefined, "nothing ran");
      // The model that sees only structuredContent learns the same; the
      // SDK validated it against execute_command's output schema.
      assert.equal(res.structuredContent?.refused?.kind, "policy", JSON.stringify(res.structuredContent));
      assert.equal(res.structuredContent.refused.rule, "recursive-delete-root");
      assert.ok(res.structuredContent.refused.why, "the refusal says why");
      assert.ok(existsSync(join(sentinelRoot, "keep")), "the sentinel root was emptied");
    });

    test("a refusal validates against an output schema with required properties", async () => {
      // get_hardware_info's output schema requires host, route, os, cpu and
      // memory; a refused call carries none of them, and the SDK checks
      // structuredContent against the schema even on an error result.
      const res = await call({ refresh: "yes" }, "get_hardware_info");
      assert.equal(res.isError, true, text(res));
      assert.equal(res.structuredContent?.refused?.kind, "argument", JSON.stringify(res.structuredContent));
      assert.match(res.structuredContent.refused.why, /refresh/);
      assert.match(text(res), /refresh/);
    });
  });
}

suite("stdio", async () => {
  const state = mkdtempSync(join(tmpdir(), "rigout-sdk-stdio-"));
  const transport = new StdioClientTransport({
    command: bin,
    args: ["stdio", "--enable-system-tools"],
    env: { ...process.env, RIGOUT_STATE_DIR: state, RIGOUT_CONFIG: configFile },
    cwd: state,
    stderr: "pipe",
  });
  const client = new Client({ name: "rigout-interop-sdk", version: "1.0.0" });
  await client.connect(transport);
  return {
    client,
    teardown: async () => {
      // client.close() ends the child; make sure, by PID.
      if (transport.pid) {
        try {
          process.kill(transport.pid, "SIGKILL");
        } catch {
          // Already gone.
        }
      }
      rmSync(state, { recursive: true, force: true });
    },
  };
});

suite("http", async () => {
  const state = mkdtempSync(join(tmpdir(), "rigout-sdk-http-"));
  const token = randomBytes(24).toString("hex");
  const server = startServe({ ...process.env, RIGOUT_STATE_DIR: state, RIGOUT_AUTH_TOKEN: token, RIGOUT_CONFIG: configFile });
  const teardown = async () => {
    await stop(server.child);
    rmSync(state, { recursive: true, force: true });
  };
  try {
    const url = await server.url;
    // Without the token the server answers 401 with a challenge.
    const anon = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    assert.equal(anon.status, 401);
    assert.match(anon.headers.get("www-authenticate") ?? "", /^Bearer/);
    const denied = new Client({ name: "rigout-interop-sdk", version: "1.0.0" });
    await assert.rejects(
      denied.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: "Bearer wrong" } } })),
    );
    await denied.close().catch(() => {});

    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    const client = new Client({ name: "rigout-interop-sdk", version: "1.0.0" });
    await client.connect(transport);
    return { client, teardown };
  } catch (err) {
    await teardown();
    throw err;
  }
});

// The operator's path: `rigout start --detach`, then the SDK client
// connects with exactly what `rigout connect json` printed, and `rigout
// stop` leaves no process behind.
suite("start --detach, connect json", async () => {
  const state = mkdtempSync(join(tmpdir(), "rigout-sdk-detach-"));
  const env = { ...process.env, RIGOUT_STATE_DIR: state, RIGOUT_CONFIG: configFile };
  const rigout = (...args) => execFileSync(bin, args, { env, encoding: "utf8", timeout: 60000 });
  rigout("start", "--detach", "--addr", "127.0.0.1:0", "--enable-system-tools");
  const pid = JSON.parse(readFileSync(join(state, "runtime.json"), "utf8")).pid;
  const snippet = JSON.parse(rigout("connect", "json"));
  assert.equal(snippet.transport, "streamable-http");
  assert.match(snippet.headers.Authorization, /^Bearer \S{40,}$/);
  const transport = new StreamableHTTPClientTransport(new URL(snippet.url), { requestInit: { headers: snippet.headers } });
  const client = new Client({ name: "rigout-interop-sdk", version: "1.0.0" });
  await client.connect(transport);
  return {
    client,
    teardown: async () => {
      await client.close().catch(() => {});
      rigout("stop");
      // Gone, or a zombie its new parent (init) has yet to reap: either way
      // nothing runs.
      const running = () => {
        try {
          const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
          return !/^\S+ \(.*\) [ZX] /s.test(stat);
        } catch {
          return false;
        }
      };
      for (let i = 0; i < 100 && running(); i++) await new Promise((r) => setTimeout(r, 50));
      assert.equal(running(), false, `rigout stop left PID ${pid} running`);
      assert.throws(() => rigout("status"), (e) => e.status === 1, "status after stop says not running");
      rmSync(state, { recursive: true, force: true });
    },
  };
});
