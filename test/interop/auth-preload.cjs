// Preload (node --require) that adds "Authorization: Bearer $INTEROP_TOKEN"
// to every HTTP request the process sends to $INTEROP_ORIGIN, and to no
// other origin. The conformance suite has no option for request headers;
// it sends its requests through the global fetch (the MCP SDK client and
// the SSE scenarios), through undici's request() (the DNS rebinding
// scenario) and through node:http's request() (the 2026-07-28 header
// validation scenario), so all three are wrapped. A header the caller set
// itself wins.
"use strict";

const token = process.env.INTEROP_TOKEN;
const origin = process.env.INTEROP_ORIGIN;
if (!token || !origin) {
  throw new Error("auth-preload: INTEROP_TOKEN and INTEROP_ORIGIN must be set");
}
const header = `Bearer ${token}`;

function targetsServer(input) {
  try {
    const url = typeof input === "string" || input instanceof URL ? new URL(input) : new URL(input.url);
    return url.origin === origin;
  } catch {
    return false;
  }
}

// Global fetch: the headers may be a Headers object, an array of pairs or a
// plain object; Headers copies all three.
const realFetch = globalThis.fetch;
globalThis.fetch = function fetchWithAuth(input, init) {
  if (!targetsServer(input)) {
    return realFetch(input, init);
  }
  const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
  if (!headers.has("authorization")) {
    headers.set("authorization", header);
  }
  return realFetch(input, { ...init, headers });
};

// undici.request, as the suite resolves it. The suite imports undici as an
// ES module; Node builds that module's named exports from the CommonJS
// exports object when it is first imported, so replacing the property here,
// before the suite loads, is what the suite sees.
const path = require("node:path");
const suiteDir = path.dirname(require.resolve("@modelcontextprotocol/conformance/package.json", { paths: [__dirname] }));
const undici = require(require.resolve("undici", { paths: [suiteDir] }));
const realRequest = undici.request;
undici.request = function requestWithAuth(url, opts = {}) {
  if (!targetsServer(url)) {
    return realRequest.call(this, url, opts);
  }
  const headers = { ...(opts.headers ?? {}) };
  if (!Object.keys(headers).some((k) => k.toLowerCase() === "authorization")) {
    headers.authorization = header;
  }
  return realRequest.call(this, url, { ...opts, headers });
};

// node:http's request(options[, callback]), as the suite calls it: one
// options object with hostname, port and headers. The suite imports the
// module's default export, which is this very object.
const http = require("node:http");
const realHTTPRequest = http.request;
http.request = function httpRequestWithAuth(opts, ...rest) {
  if (typeof opts !== "object" || opts === null || opts instanceof URL) {
    return realHTTPRequest.call(this, opts, ...rest);
  }
  const port = opts.port ?? 80;
  if (!targetsServer(`http://${opts.hostname ?? opts.host ?? "localhost"}:${port}`)) {
    return realHTTPRequest.call(this, opts, ...rest);
  }
  const headers = { ...(opts.headers ?? {}) };
  if (!Object.keys(headers).some((k) => k.toLowerCase() === "authorization")) {
    headers.authorization = header;
  }
  return realHTTPRequest.call(this, { ...opts, headers }, ...rest);
};
