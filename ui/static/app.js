// rigout activity page. Every value from the server is set with
// textContent: nothing from the ledger is ever parsed as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
let source = null;
let approvalTimer = null;
const durations = new Map(); // tool -> [ms]

// visible shows C0 and C1 control characters, DEL and bidirectional
// overrides as escapes (\x1b, \u202e): a tool name or an error from the
// ledger cannot fake a row or reorder what the page shows. keepNewlines
// keeps line breaks, for multi-line blocks.
function visible(s, keepNewlines) {
  return String(s).replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) => {
    if (keepNewlines && c === "\n") return c;
    const n = c.charCodeAt(0);
    return n < 0x100 ? "\\x" + n.toString(16).padStart(2, "0") : "\\u" + n.toString(16).padStart(4, "0");
  });
}

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = visible(text);
  if (cls) e.className = cls;
  return e;
}

async function api(path, opts) {
  const res = await fetch(path, Object.assign({ credentials: "same-origin" }, opts || {}));
  if (res.status === 401) { showSignin(""); throw new Error("signed out"); }
  if (!res.ok) {
    let msg = res.statusText;
    try { msg = (await res.json()).error || msg; } catch (e) { /* not JSON */ }
    throw new Error(msg);
  }
  return res.status === 204 ? null : res.json();
}

function showSignin(msg) {
  if (source) { source.close(); source = null; }
  if (approvalTimer) { clearInterval(approvalTimer); approvalTimer = null; }
  $("approvals").hidden = true;
  $("app").hidden = true;
  $("logout").hidden = true;
  $("signin").hidden = false;
  $("who").textContent = "";
  $("live").textContent = "signed out";
  $("live").classList.remove("on");
  $("signin-error").textContent = visible(msg || "");
}

async function signin(ev) {
  ev.preventDefault();
  const token = $("token").value.trim();
  $("token").value = "";
  try {
    const res = await fetch("login", { method: "POST", credentials: "same-origin", headers: { "Authorization": "Bearer " + token } });
    if (!res.ok) {
      let msg = "sign-in refused (" + res.status + ")";
      try { const b = await res.json(); msg = b.error_description || b.error || msg; } catch (e) { /* not JSON */ }
      showSignin(msg);
      return;
    }
    start();
  } catch (e) {
    showSignin(e.message);
  }
}

async function start() {
  let me;
  try { me = await api("api/me"); } catch (e) { return; }
  $("signin").hidden = true;
  $("app").hidden = false;
  $("logout").hidden = false;
  $("who").textContent = visible(me.principal) + (me.all_calls ? " (all calls)" : " (own calls)");
  $("rows").replaceChildren();
  durations.clear();
  refreshState();
  verify();
  $("approvals").hidden = !me.approve;
  if (me.approve) {
    refreshApprovals();
    approvalTimer = setInterval(refreshApprovals, 2000);
  }
  source = new EventSource("api/stream");
  source.onopen = () => { $("live").textContent = "live"; $("live").classList.add("on"); };
  source.onerror = () => { $("live").textContent = "reconnecting"; $("live").classList.remove("on"); };
  source.onmessage = (m) => addRow(JSON.parse(m.data));
  source.addEventListener("expired", () => showSignin("The sign-in expired; paste a token again."));
}

function cell(tr, text, cls) { tr.appendChild(el("td", text, cls)); }

function addRow(r) {
  if (r.phase === "intent") return; // its done row follows
  const tr = document.createElement("tr");
  tr.dataset.tool = r.tool || "";
  tr.dataset.principal = r.principal || "";
  tr.dataset.host = r.host || "";
  tr.dataset.status = r.status || "";
  tr.dataset.seq = String(r.seq);
  if (r.refused) tr.classList.add("refused");
  if (r.status === "error") tr.classList.add("error");
  if (r.call_id) {
    tr.classList.add("call");
    tr.addEventListener("click", () => showCall(r.call_id, tr));
  }
  cell(tr, r.seq, "nowrap");
  cell(tr, new Date(r.time).toLocaleTimeString(), "nowrap");
  cell(tr, r.type, "nowrap");
  cell(tr, r.tool, "tool nowrap");
  cell(tr, r.ran, "ran");
  tr.lastChild.title = visible(r.ran || "");
  cell(tr, r.principal, "nowrap");
  cell(tr, r.host, "nowrap");
  cell(tr, r.route, "nowrap");
  cell(tr, r.decision, "nowrap");
  cell(tr, r.rule, "rule nowrap");
  cell(tr, r.state || r.status, "status nowrap");
  cell(tr, r.exit_code === undefined || r.exit_code < 0 ? "" : r.exit_code, "nowrap");
  cell(tr, r.duration_ms ? r.duration_ms.toFixed(1) + " ms" : "", "nowrap");
  cell(tr, r.error, "err");
  applyFilter(tr);
  $("rows").prepend(tr);
  while ($("rows").children.length > 1000) $("rows").lastChild.remove();
  if (r.tool && r.duration_ms && !r.refused) {
    const d = durations.get(r.tool) || [];
    d.push(r.duration_ms);
    if (d.length > 200) d.shift();
    durations.set(r.tool, d);
    drawChart();
  }
  if (r.type && (r.type.startsWith("process.") || r.type.startsWith("session."))) refreshState();
}

function matches(tr) {
  const f = (id, key) => { const v = $(id).value.trim().toLowerCase(); return !v || (tr.dataset[key] || "").toLowerCase().includes(v); };
  return f("f-tool", "tool") && f("f-principal", "principal") && f("f-host", "host") && f("f-status", "status") &&
    (!$("f-refused").checked || tr.classList.contains("refused"));
}
function applyFilter(tr) { tr.hidden = !matches(tr); }
function applyFilters() { for (const tr of $("rows").children) if (tr.id !== "detail-row") applyFilter(tr); }

function drawChart() {
  const chart = $("chart");
  chart.replaceChildren();
  let top = 1;
  const p50s = [];
  for (const [tool, d] of durations) {
    const s = [...d].sort((a, b) => a - b);
    const p = s[Math.floor((s.length - 1) / 2)];
    p50s.push([tool, p]);
    top = Math.max(top, p);
  }
  for (const [tool, p] of p50s) {
    const row = el("div", null, "chart-row");
    row.appendChild(el("span", tool));
    row.appendChild(el("span", p.toFixed(1) + " ms"));
    const bar = el("span", null, "bar");
    bar.style.width = Math.max(2, Math.round(120 * p / top)) + "px";
    row.appendChild(bar);
    chart.appendChild(row);
  }
}

// The detail of a call opens in place: in a row right under the clicked
// one, as labelled fields. A second click on the row closes it.
async function showCall(id, tr) {
  const d = $("detail");
  if (!d.hidden && d.dataset.call === id) { closeDetail(); return; }
  let holder = $("detail-row");
  if (!holder) {
    holder = document.createElement("tr");
    holder.id = "detail-row";
    const td = document.createElement("td");
    td.colSpan = $("calls").tHead.rows[0].cells.length;
    holder.appendChild(td);
  }
  holder.firstChild.appendChild(d);
  tr.after(holder);
  d.dataset.call = id;
  $("detail-id").textContent = visible(id);
  const body = $("detail-body");
  body.replaceChildren(el("p", "loading…", "hint"));
  d.hidden = false;
  try {
    const rows = await api("api/call?id=" + encodeURIComponent(id));
    body.replaceChildren(...rows.map(fields));
  } catch (e) {
    body.replaceChildren(el("p", visible(e.message), "error"));
  }
}

function closeDetail() {
  const d = $("detail");
  d.hidden = true;
  d.dataset.call = "";
  $("app").appendChild(d);
  const h = $("detail-row");
  if (h) h.remove();
}

const detailFields = [
  ["state", "status"], ["ran", "ran"], ["time", "time"], ["principal", "principal"], ["host", "host"],
  ["route", "route"], ["decision", "decision"], ["rule", "rule"], ["exit_code", "exit code"], ["signal", "signal"],
  ["duration_ms", "duration"], ["stdout_bytes", "stdout bytes"], ["stderr_bytes", "stderr bytes"],
  ["truncated", "output cut"], ["bypassed", "policy bypassed"], ["error", "error"], ["args_digest", "arguments digest"],
];

// fields renders one ledger row of a call as labelled values, every value
// as text.
function fields(r) {
  const box = el("div", null, "fields");
  box.appendChild(el("h3", (r.phase || r.type) + " · seq " + r.seq));
  const dl = document.createElement("dl");
  const add = (label, v) => {
    if (v === undefined || v === null || v === "" || v === false) return;
    dl.appendChild(el("dt", label));
    dl.appendChild(el("dd", visible(typeof v === "string" || typeof v === "number" || v === true ? String(v) : JSON.stringify(v))));
  };
  for (const [key, label] of detailFields) {
    let v = r[key];
    if (key === "time") v = new Date(v).toLocaleString();
    if (key === "duration_ms") v = v ? v.toFixed(1) + " ms" : "";
    if (key === "exit_code" && v < 0) v = "";
    if (key === "state" && !v) v = r.status;
    add(label, v);
  }
  if (r.args && typeof r.args === "object") {
    for (const [k, v] of Object.entries(r.args)) add("argument " + k, v);
  } else {
    add("arguments", r.args);
  }
  if (r.detail) {
    try {
      for (const [k, v] of Object.entries(JSON.parse(r.detail))) add(k, v);
    } catch (e) {
      add("detail", r.detail);
    }
  }
  box.appendChild(dl);
  return box;
}

// procState says how a background process stands, in words.
function procState(p) {
  if (p.running) return "running";
  if (p.stopped) return p.stopped;
  if (p.timed_out) return "timed out";
  if (p.signal) return "killed by " + p.signal;
  if (p.error) return "failed";
  return "exited " + p.exit_code;
}

function list(id, items, fmt) {
  const ul = $(id);
  ul.replaceChildren();
  if (!items || items.length === 0) { ul.appendChild(el("li", "none")); return; }
  for (const it of items) ul.appendChild(el("li", fmt(it)));
}

async function refreshState() {
  let s;
  try { s = await api("api/state"); } catch (e) { return; }
  const h = s.health;
  if (h) {
    $("health").textContent = visible("audit: " + h.audit + (h.audit_error ? " — " + h.audit_error : ""));
    $("health").className = h.ok ? "ok" : "bad";
  }
  list("hosts", s.hosts, (x) => x);
  list("processes", s.processes, (p) => p.id + " " + procState(p) + ": " + p.command);
  list("terminals", s.terminals, (t) => t.session_id + " on " + t.host + (t.running ? " (running " + t.command + ")" : ""));
}

async function refreshApprovals() {
  let res;
  try { res = await api("api/approvals"); } catch (e) { return; }
  const ul = $("pending");
  ul.replaceChildren();
  const items = res.approvals || [];
  if (items.length === 0) { ul.appendChild(el("li", "none")); return; }
  for (const a of items) {
    const li = el("li", null, "pending");
    li.appendChild(el("div", a.principal + " asks to run on " + a.host + " (" + a.tool + ", rule " + a.rule +
      (a.bypass ? ", bypass_security" : "") + "), expires " + new Date(a.expires).toLocaleTimeString() + ":"));
    li.appendChild(el("pre", a.command + (a.dir ? "\n  in " + a.dir : "")));
    li.appendChild(el("div", "held back: " + a.reason + " · digest " + a.digest, "hint"));
    const yes = el("button", "Approve");
    const no = el("button", "Deny");
    const out = el("span", "", "error");
    const decide = async (decision) => {
      yes.disabled = no.disabled = true;
      try {
        await api("api/approvals", { method: "POST", headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ id: a.id, digest: a.digest, decision: decision }) });
        refreshApprovals();
      } catch (e) {
        out.textContent = visible(e.message);
        yes.disabled = no.disabled = false;
      }
    };
    yes.addEventListener("click", () => decide("approve"));
    no.addEventListener("click", () => decide("deny"));
    li.append(yes, no, out);
    ul.appendChild(li);
  }
}

async function verify() {
  try {
    const v = await api("api/verify");
    if (v.ok && v.report) {
      const r = v.report;
      const ok = !r.problem;
      $("verify").textContent = visible(ok ? "chain verified: " + r.rows + " rows, last seq " + r.last_seq
        : "CHAIN BROKEN: " + JSON.stringify(r.problem));
      $("verify").className = ok ? "ok" : "bad";
    } else {
      $("verify").textContent = visible("verification failed: " + (v.error || "unknown"));
      $("verify").className = "bad";
    }
  } catch (e) {
    $("verify").textContent = visible(e.message);
  }
}

async function logout() {
  try { await api("logout", { method: "POST" }); } catch (e) { /* already out */ }
  showSignin("Signed out.");
}

document.addEventListener("DOMContentLoaded", () => {
  $("signin-form").addEventListener("submit", signin);
  $("logout").addEventListener("click", logout);
  $("verify-btn").addEventListener("click", verify);
  $("detail-close").addEventListener("click", closeDetail);
  for (const id of ["f-tool", "f-principal", "f-host", "f-status"]) $(id).addEventListener("input", applyFilters);
  $("f-refused").addEventListener("change", applyFilters);
  start();
});
