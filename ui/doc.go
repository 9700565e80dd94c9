// Package ui serves rigout's live activity page: calls as they happen
// (server-sent events read from the audit ledger), a call's detail with
// its redacted arguments when the ledger stores them, refusals with their
// rule, background processes and terminal sessions, hosts, the ledger's
// health and a chain verification. The page is plain HTML, CSS and a
// little JavaScript embedded in the binary; it loads nothing from
// elsewhere.
//
// Security: a person signs in by pasting a bearer token, which the
// configured authenticator (auth.Front.RequireBearer) checks; the page
// then holds an HttpOnly, SameSite=Strict session cookie (Secure when
// served over TLS) bound to that principal, which expires. Every request
// that changes state, and the event stream, must come from the page's own
// origin (Origin, or Sec-Fetch-Site for a same-origin GET). A principal
// without full scopes sees only its own calls, as get_server_activity
// shows them. Responses carry a Content-Security-Policy of default-src
// 'self' with frame-ancestors 'none', so no inline script runs, and the
// script renders every value with textContent, never as HTML.
package ui
