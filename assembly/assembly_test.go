package assembly_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/assembly"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/config"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/validate"
)

func TestMain(m *testing.M) {
	exec.ServeSandboxSpawner() // the views' spawner is this binary, started again
	os.Exit(m.Run())
}

// newServer builds an assembly without SSH on a fresh state directory and
// SQLite ledger, closed with the test.
func newServer(t *testing.T, f *config.File, opts ...assembly.Option) *assembly.Server {
	t.Helper()
	dir := t.TempDir()
	ledger, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(dir, "audit.db")})
	if err != nil {
		t.Fatal(err)
	}
	s, err := assembly.New(assembly.Config{File: f, StateDir: dir, NoSSH: true, Ledger: ledger, CloseLedger: true}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func toolNames(s *assembly.Server) []string {
	var names []string
	for _, t := range s.Tools() {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	return names
}

var echoTool = rigout.Tool{
	Name:        "echo_back",
	Description: "Returns its text.",
	Risk:        rigout.ReadOnly,
	InputSchema: json.RawMessage(`{"type": "object", "properties": {"text": {"type": "string"}}, "additionalProperties": false}`),
	Handler: func(_ context.Context, call *rigout.Call) (*mcp.CallToolResult, error) {
		var a struct {
			Text string `json:"text"`
		}
		if err := call.Bind(&a); err != nil {
			return nil, err
		}
		return rigout.TextResult(a.Text), nil
	},
}

func TestFamilies(t *testing.T) {
	withSystem := &config.File{Families: config.Families{System: true}}
	tests := []struct {
		name      string
		file      *config.File
		opts      []assembly.Option
		has, lack []string
	}{
		{"defaults", &config.File{}, nil,
			[]string{"execute_command", "file_operations", "create_terminal_session", "get_server_activity"},
			[]string{"system_monitoring", "docker_operations", "manage_hosts"}},
		{"the file turns a family on", withSystem, nil, []string{"system_monitoring"}, nil},
		{"Without wins over the file", withSystem, []assembly.Option{assembly.Without(assembly.System, assembly.Terminal)},
			[]string{"execute_command"}, []string{"system_monitoring", "create_terminal_session"}},
		{"WithTools adds a tool", &config.File{}, []assembly.Option{assembly.WithTools(echoTool)}, []string{"echo_back", "execute_command"}, nil},
		{"WithFamily sees the shared resources", &config.File{}, []assembly.Option{assembly.WithFamily("mine", func(s *assembly.Server) ([]rigout.Tool, string, error) {
			if s.Local() == nil || s.Gate() == nil || s.Processes() == nil || s.Router() != nil {
				return nil, "", errors.New("shared resources missing")
			}
			return []rigout.Tool{echoTool}, "echo_back echoes.", nil
		})}, []string{"echo_back"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.file, tt.opts...)
			names := toolNames(s)
			for _, n := range tt.has {
				if !slices.Contains(names, n) {
					t.Errorf("%s not served: %v", n, names)
				}
			}
			for _, n := range tt.lack {
				if slices.Contains(names, n) {
					t.Errorf("%s served: %v", n, names)
				}
			}
		})
	}
}

func TestNewRefuses(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		cfg  assembly.Config
		opts []assembly.Option
		want string
	}{
		{"no file", assembly.Config{StateDir: dir}, nil, "Config.File is nil"},
		{"no state directory", assembly.Config{File: &config.File{}}, nil, "StateDir is empty"},
		{"unknown family", assembly.Config{File: &config.File{}, StateDir: dir}, []assembly.Option{assembly.Without("dockr")}, `no such family; known: shell,`},
		{"a built-in's name", assembly.Config{File: &config.File{}, StateDir: dir}, []assembly.Option{assembly.WithFamily("files", nil)}, "a built-in family has that name"},
		{"a bad policy", assembly.Config{File: &config.File{Policy: &config.Policy{Rules: map[string]validate.Action{"nope": validate.Off}}}, StateDir: dir}, nil, "unknown rule"},
		{"a family that fails", assembly.Config{File: &config.File{}, StateDir: dir, NoSSH: true},
			[]assembly.Option{assembly.WithFamily("broken", func(*assembly.Server) ([]rigout.Tool, string, error) { return nil, "", errors.New("no disk") })},
			"family broken: no disk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := assembly.New(tt.cfg, tt.opts...)
			if err == nil {
				s.Close()
				t.Fatal("built")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

// TestCloseClosesInOrder: Close closes what New built, the ledger last
// when it was handed over, once; later calls do nothing.
func TestCloseClosesInOrder(t *testing.T) {
	dir := t.TempDir()
	ledger, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(dir, "audit.db")})
	if err != nil {
		t.Fatal(err)
	}
	s, err := assembly.New(assembly.Config{File: &config.File{}, StateDir: dir, NoSSH: true, Ledger: ledger, CloseLedger: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ledger.Healthy(); err == nil {
		t.Error("the ledger is still open after Close")
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := s.Processes().Start(context.Background(), "test", exec.Command{Shell: "true"}); err == nil {
		t.Error("the background processes' manager still starts processes after Close")
	}

	// A New that fails closes the ledger it was handed too.
	ledger, err = sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(dir, "audit2.db")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := assembly.New(assembly.Config{StateDir: dir, Ledger: ledger, CloseLedger: true}); err == nil {
		t.Fatal("built without a File")
	}
	if err := ledger.Healthy(); err == nil {
		t.Error("a failed New left the ledger it was handed open")
	}
}

// TestTwoServers: two assemblies with different configurations work side
// by side, and a call goes through the whole chain to the ledger.
func TestTwoServers(t *testing.T) {
	a := newServer(t, &config.File{}, assembly.WithTools(echoTool))
	b := newServer(t, &config.File{}, assembly.Without(assembly.Files))
	if slices.Contains(toolNames(a), "file_operations") == slices.Contains(toolNames(b), "file_operations") {
		t.Fatalf("the two assemblies serve alike: %v / %v", toolNames(a), toolNames(b))
	}
	ctx := context.Background()
	c, err := client.NewInProcessClient(a.MCPServer())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	var req mcp.CallToolRequest
	req.Params.Name = "echo_back"
	req.Params.Arguments = map[string]any{"text": "through the chain"}
	res, err := c.CallTool(ctx, req)
	if err != nil || res.IsError || res.Content[0].(mcp.TextContent).Text != "through the chain" {
		t.Fatalf("echo_back: %v %+v", err, res)
	}
	if h := a.HealthFields(); h["sandbox"] == nil || h["descendants"] == nil {
		t.Errorf("health without the sandbox or descendants: %v", h)
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name, body, hostKeys string
		want                 string // "" for valid
	}{
		{"valid", `{"hosts": [{"name": "web1", "address": "10.0.0.5"}]}`, "", ""},
		{"bad host key policy", `{}`, "trust-everyone", "ssh.host_keys"},
		{"reserved host name", `{"hosts": [{"name": "local"}]}`, "", "reserved"},
		{"bad helper mode", `{"hosts": [{"name": "web1", "helper": "sometimes"}]}`, "", "sometimes"},
		{"downstream with two tokens", `{"downstream": {"d": {"url": "https://x.test/mcp", "token_env": "A", "token_credential": "b"}}}`, "", "not both"},
		{"token without a value", `{"tokens": [{"name": "ci"}]}`, "", "needs sha256"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := config.Parse("t.json", []byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			problems := assembly.Check(f, tt.hostKeys, func(string) string { return "" })
			if tt.want == "" {
				if len(problems) > 0 {
					t.Fatalf("problems: %v", problems)
				}
				return
			}
			if err := errors.Join(problems...); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("problems %v, want one mentioning %q", problems, tt.want)
			}
		})
	}
}
