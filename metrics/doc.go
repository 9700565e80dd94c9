// Package metrics exports what a rigout gateway does in the Prometheus text
// format: tool calls by tool, status and route, refusals by rule, errors,
// latency histograms, calls in flight, background processes and terminal
// sessions, the audit ledger's commit latency and health, pooled SSH
// connections per host and authentication failures by reason.
//
// It observes the gateway from the outside, through the interfaces the
// gateway already has: [Metrics.Ledger] wraps the audit ledger (every call
// ends in exactly one row there, so the counts here are the ledger's),
// [Metrics.Middleware] counts calls in flight, [Metrics.OnAuthEvent] wraps
// the front's OnEvent hook, and [Config] takes the process manager and the
// SSH router for gauges read at scrape time. The root package never links
// client_golang.
//
// Labels are bounded: tool names are the registered tools', statuses the
// ledger's, routes only their kind ("local", "ssh", ...), hosts only the
// inventory's names; rule IDs and auth reasons are capped at a fixed
// number of distinct values, after which they count as "other". No command
// text and no argument value is ever a label.
//
// [Metrics.Handler] serves the registry. Mount it behind a token with the
// metrics capability ([auth.Scopes].Metrics) or on a loopback-only
// listener.
package metrics
