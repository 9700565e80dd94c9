// Reads the conformance suite's results for one target and judges them
// against the allow-list.
//
//   node check-results.mjs TARGET RESULTS_DIR ALLOW_LIST SCENARIO...
//
// RESULTS_DIR holds what `conformance server -o RESULTS_DIR` wrote: one
// folder server-SCENARIO-TIMESTAMP/checks.json per scenario. A scenario
// passes when none of its checks has status FAILURE (WARNING and INFO
// checks are reported, not judged), and fails when a check failed or the
// scenario left no results (it crashed or timed out). A failure is expected
// when the allow-list has a line "TARGET SCENARIO REASON". Exit status 1
// means an unexpected failure, or an allow-list line without a reason.
//
// Prints one line per scenario and a closing "conformance TARGET: N passed,
// N failed" line (allow-listed failures are counted as failed and named).
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";

const [target, dir, allowPath, ...scenarios] = process.argv.slice(2);
if (!target || !dir || !allowPath || scenarios.length === 0) {
  console.error("usage: node check-results.mjs TARGET RESULTS_DIR ALLOW_LIST SCENARIO...");
  process.exit(2);
}

// The allow-list: "TARGET SCENARIO REASON…" per line, # comments.
const allowed = new Map();
let badList = false;
for (const [i, raw] of readFileSync(allowPath, "utf8").split("\n").entries()) {
  const line = raw.replace(/#.*/, "").trim();
  if (!line) continue;
  const [t, scenario, ...reason] = line.split(/\s+/);
  if (reason.length === 0) {
    console.error(`${allowPath}:${i + 1}: an allow-list entry needs a reason: ${raw}`);
    badList = true;
    continue;
  }
  if (t === target) allowed.set(scenario, reason.join(" "));
}

let entries = [];
try {
  entries = readdirSync(dir);
} catch {
  // No results at all: every scenario fails below.
}

function checksOf(scenario) {
  // The newest results folder of this scenario; names end in a timestamp.
  const prefix = `server-${scenario}-`;
  const mine = entries.filter((e) => e.startsWith(prefix) && /^\d{4}-/.test(e.slice(prefix.length))).sort();
  if (mine.length === 0) return null;
  try {
    return JSON.parse(readFileSync(join(dir, mine.at(-1), "checks.json"), "utf8"));
  } catch {
    return null;
  }
}

let passed = 0;
let failed = 0;
let unexpected = 0;
const width = Math.max(...scenarios.map((s) => s.length));
for (const scenario of scenarios) {
  const checks = checksOf(scenario);
  const count = (s) => (checks ?? []).filter((c) => c.status === s).length;
  const failures = (checks ?? []).filter((c) => c.status === "FAILURE");
  const ok = checks !== null && failures.length === 0;
  const reason = allowed.get(scenario);
  let verdict;
  if (ok) {
    passed++;
    verdict = reason ? "pass (allow-listed, passed this time)" : "pass";
  } else {
    failed++;
    if (reason) {
      verdict = `FAIL, allow-listed: ${reason}`;
    } else {
      unexpected++;
      verdict = "FAIL (unexpected)";
    }
  }
  const tally = checks === null ? "no results" : `${count("SUCCESS")} ok, ${count("FAILURE")} failed, ${count("WARNING")} warn, ${count("INFO")} info`;
  console.log(`  ${scenario.padEnd(width)}  ${tally.padEnd(34)} ${verdict}`);
  for (const f of failures) {
    console.log(`  ${"".padEnd(width)}    ${f.name}: ${f.errorMessage ?? f.description}`);
  }
  if (checks === null) {
    console.log(`  ${"".padEnd(width)}    the scenario wrote no checks.json: see ${join(dir, `${scenario}.log`)}`);
  }
}
for (const scenario of allowed.keys()) {
  if (!scenarios.includes(scenario)) {
    console.log(`  note: allow-list entry "${target} ${scenario}" names a scenario that did not run`);
  }
}
console.log(`conformance ${target}: ${passed} passed, ${failed} failed`);
if (unexpected > 0) {
  console.log(`conformance ${target}: ${unexpected} unexpected failure(s)`);
}
process.exit(unexpected > 0 || badList ? 1 : 0);
