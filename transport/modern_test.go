package transport_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rigout/rigout/transport"
)

// TestModernGetAndDeleteAre405: at protocol 2026-07-28 GET and DELETE on
// the MCP endpoint are 405 with Allow: POST, stateful or stateless, with or
// without a session header (the stateful server used to answer 400 or
// 404); at 2025-11-25 the stateful server still checks the session.
func TestModernGetAndDeleteAre405(t *testing.T) {
	tests := []struct {
		name       string
		stateless  bool
		method     string
		version    string
		session    string
		wantStatus int
	}{
		{"stateful GET", false, http.MethodGet, "2026-07-28", "", http.StatusMethodNotAllowed},
		{"stateful DELETE", false, http.MethodDelete, "2026-07-28", "", http.StatusMethodNotAllowed},
		{"stateful DELETE with a session", false, http.MethodDelete, "2026-07-28", "not-a-session", http.StatusMethodNotAllowed},
		{"stateful GET with a session", false, http.MethodGet, "2026-07-28", "not-a-session", http.StatusMethodNotAllowed},
		{"stateless DELETE", true, http.MethodDelete, "2026-07-28", "", http.StatusMethodNotAllowed},
		{"2025 DELETE without a session", false, http.MethodDelete, "2025-11-25", "", http.StatusBadRequest},
		{"2025 DELETE of another's session", false, http.MethodDelete, "2025-11-25", "not-a-session", http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHTTP(t, testServer(new(atomic.Int64)), transport.HTTPConfig{InsecureNoAuth: true, Stateless: tt.stateless})
			defer h.Close()
			ts := httptest.NewServer(h.Handler())
			defer ts.Close()
			req, _ := http.NewRequest(tt.method, ts.URL+"/mcp", nil)
			req.Header.Set("MCP-Protocol-Version", tt.version)
			if tt.session != "" {
				req.Header.Set("Mcp-Session-Id", tt.session)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body := readAll(t, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("%s at %s = %d %s, want %d", tt.method, tt.version, resp.StatusCode, body, tt.wantStatus)
			}
			if tt.wantStatus == http.StatusMethodNotAllowed {
				if resp.Header.Get("Allow") != "POST" || !strings.Contains(body, "method_not_allowed") {
					t.Errorf("405 with Allow=%q body %s, want Allow: POST and method_not_allowed", resp.Header.Get("Allow"), body)
				}
			}
		})
	}
}
