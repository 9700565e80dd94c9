package auth_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"

	"github.com/rigout/rigout/auth"
)

// refusedByType is every event type this package defines and whether it
// is a refusal.
var refusedByType = map[auth.EventType]bool{
	auth.EventRejected:  true,
	auth.EventDenied:    true,
	auth.EventThrottled: true,
	auth.EventSetupUsed: false,
	auth.EventConsent:   false,
	auth.EventGrant:     false,
	auth.EventRefresh:   false,
	auth.EventRevoke:    false,
	auth.EventRegister:  false,
}

func TestEventRefused(t *testing.T) {
	for typ, want := range refusedByType {
		if got := (auth.Event{Type: typ}).Refused(); got != want {
			t.Errorf("Event{Type: %q}.Refused() = %v, want %v", typ, got, want)
		}
	}
	for _, typ := range []auth.EventType{"", "auth.denied", "AUTH.DENY", "tool.call"} {
		if (auth.Event{Type: typ}).Refused() {
			t.Errorf("Event{Type: %q}.Refused() = true for a type this package does not define", typ)
		}
	}
}

// TestEventTypesClassified: every EventType constant declared in the
// package is in refusedByType with its wire value unchanged, so a new type
// cannot be added without deciding whether it is a refusal.
func TestEventTypesClassified(t *testing.T) {
	wire := map[string]string{
		"EventRejected": "http.rejected", "EventDenied": "auth.deny", "EventThrottled": "auth.throttled",
		"EventSetupUsed": "setup.used", "EventConsent": "oauth.consent", "EventGrant": "oauth.grant",
		"EventRefresh": "oauth.refresh", "EventRevoke": "oauth.revoke", "EventRegister": "oauth.register",
	}
	f, err := parser.ParseFile(token.NewFileSet(), "event.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "EventType" {
				continue
			}
			for i, name := range vs.Names {
				n++
				v, err := strconv.Unquote(vs.Values[i].(*ast.BasicLit).Value)
				if err != nil {
					t.Fatal(err)
				}
				if want, ok := wire[name.Name]; !ok || v != want {
					t.Errorf("%s = %q: not a known type, or its value changed (want %q)", name.Name, v, want)
				}
				if _, ok := refusedByType[auth.EventType(v)]; !ok {
					t.Errorf("%s (%q) is not classified in refusedByType", name.Name, v)
				}
			}
		}
	}
	if n != len(refusedByType) || n != len(wire) {
		t.Errorf("event.go declares %d EventType constants; the tables list %d and %d", n, len(refusedByType), len(wire))
	}
}
