package federation_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/rigouttest"
)

// TestFederatedPathArgsKeepRoots: a token confined to a file root calls a
// real stdio downstream's tool whose arguments name paths. A path outside
// the root — absolute, relative to the server's directory with "..",
// through a symbolic link inside the root, in a list, or an argument the
// operator declared in path_args — is refused before the downstream sees
// it, with a refusal row; a path inside reaches the downstream resolved
// to the absolute path that was judged. An argument typed as a number is
// not a path. The downstream tool only echoes its arguments: harmless if
// the check regresses.
func TestFederatedPathArgsKeepRoots(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	l := rigouttest.OpenLedger(t)
	p := auth.Principal{Name: "rooted", Scopes: auth.Scopes{Tools: []string{"*"}, Hosts: []string{"*"}, Roots: []string{root}}}
	def := stdioServer("a", t.TempDir())
	def.Dir = root
	declared := stdioServer("b", t.TempDir())
	declared.Dir = root
	declared.PathArgs = []string{"target"}
	gw, _ := start(t, rigout.Config{Audit: l, Principal: &p}, def, declared)
	c := rigouttest.Connect(t, gw)

	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
		// want is the argument the downstream must receive (key → value);
		// nil means the call is refused, and refusal names what.
		want    map[string]any
		refusal string
	}{
		{"absolute inside", "a__paths", map[string]any{"path": filepath.Join(root, "sub", "f")},
			map[string]any{"path": filepath.Join(root, "sub", "f")}, ""},
		{"relative inside, from the server's dir", "a__paths", map[string]any{"path": "sub/f"},
			map[string]any{"path": filepath.Join(root, "sub", "f")}, ""},
		{"absolute outside", "a__paths", map[string]any{"path": "/etc/passwd"}, nil, "outside this token's file roots"},
		{"relative escaping with ..", "a__paths", map[string]any{"path": "../" + filepath.Base(outside) + "/f"}, nil, "outside this token's file roots"},
		{"through a symbolic link out of the root", "a__paths", map[string]any{"path": filepath.Join(root, "link", "f")}, nil, "outside this token's file roots"},
		{"home, which the downstream would expand", "a__paths", map[string]any{"path": "~/.ssh/id_ed25519"}, nil, "give an absolute path"},
		{"one of a list outside", "a__paths", map[string]any{"destination_paths": []any{filepath.Join(root, "x"), "/etc"}}, nil, "outside this token's file roots"},
		{"a list inside", "a__paths", map[string]any{"destination_paths": []any{"sub"}},
			map[string]any{"destination_paths": []any{filepath.Join(root, "sub")}}, ""},
		{"undeclared name passes by default", "a__paths", map[string]any{"target": "/etc"},
			map[string]any{"target": "/etc"}, ""},
		{"a number-typed dir is not a path", "a__paths", map[string]any{"dir": 3},
			map[string]any{"dir": float64(3)}, ""},
		{"path_args declares target", "b__paths", map[string]any{"target": "/etc"}, nil, "outside this token's file roots"},
		{"path_args replaces the default", "b__paths", map[string]any{"path": "/etc"},
			map[string]any{"path": "/etc"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := rigouttest.Call(t, c, tc.tool, tc.args)
			text := rigouttest.Text(res)
			if tc.want == nil {
				if !res.IsError || !strings.Contains(text, tc.refusal) {
					t.Fatalf("want a refusal saying %q; got error=%v %q", tc.refusal, res.IsError, text)
				}
				return
			}
			if res.IsError {
				t.Fatalf("refused: %q", text)
			}
			var got map[string]any
			if err := json.Unmarshal([]byte(text), &got); err != nil {
				t.Fatalf("downstream answer %q: %v", text, err)
			}
			for k, v := range tc.want {
				if b1, _ := json.Marshal(got[k]); string(b1) != mustJSON(t, v) {
					t.Errorf("downstream received %s = %s, want %s", k, b1, mustJSON(t, v))
				}
			}
		})
	}
	denied := 0
	for _, e := range rigouttest.Events(t, l, audit.Filter{Type: audit.TypeToolDenied}) {
		if strings.HasSuffix(e.Tool, "__paths") {
			denied++
		}
	}
	if denied < 5 { // the five scope refusals; the ~ one is refused as invalid
		t.Errorf("%d refusal rows for the path tools, want at least 5", denied)
	}

	// A token without roots passes paths as given: nothing to judge.
	free := auth.Principal{Name: "free", Scopes: auth.FullScopes()}
	gw2, _ := start(t, rigout.Config{Principal: &free}, def)
	res := rigouttest.Call(t, rigouttest.Connect(t, gw2), "a__paths", map[string]any{"path": "sub/f"})
	if res.IsError || !strings.Contains(rigouttest.Text(res), `"path":"sub/f"`) {
		t.Errorf("unconfined token: %v %q", res.IsError, rigouttest.Text(res))
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
