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
  $("live").textContent = "offline";
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
    tr.addEventListener("click", () => showCall(r.call_id));
  }
  cell(tr, r.seq);
  cell(tr, new Date(r.time).toLocaleTimeString());
  cell(tr, r.type);
  cell(tr, r.tool, "tool");
  cell(tr, r.principal);
  cell(tr, r.host);
  cell(tr, r.route);
  cell(tr, r.decision);
  cell(tr, r.rule, "rule");
  cell(tr, r.status, "status");
  cell(tr, r.exit_code === undefined ? "" : r.exit_code);
  cell(tr, r.duration_ms ? r.duration_ms.toFixed(1) + " ms" : "");
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
  const f = (id, key) => { const v = $(id).value.trim().toLowerCase(); return !v || tr.dataset[key].toLowerCase().includes(v); };
  return f("f-tool", "tool") && f("f-principal", "principal") && f("f-host", "host") && f("f-status", "status") &&
    (!$("f-refused").checked || tr.classList.contains("refused"));
}
function applyFilter(tr) { tr.hidden = !matches(tr); }
function applyFilters() { for (const tr of $("rows").children) applyFilter(tr); }

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

async function showCall(id) {
  try {
    const rows = await api("api/call?id=" + encodeURIComponent(id));
    $("detail-id").textContent = visible(id);
    $("detail-body").textContent = visible(JSON.stringify(rows, null, 2), true);
    $("detail").hidden = false;
  } catch (e) {
    $("detail-body").textContent = visible(e.message);
    $("detail").hidden = false;
  }
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
  list("processes", s.processes, (p) => p.id + " " + (p.running ? "running" : "exited " + p.exit_code) + ": " + p.command);
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
        out.textContent = e.message;
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
  $("detail-close").addEventListener("click", () => { $("detail").hidden = true; });
  for (const id of ["f-tool", "f-principal", "f-host", "f-status"]) $(id).addEventListener("input", applyFilters);
  $("f-refused").addEventListener("change", applyFilters);
  start();
});
