package main

import (
	"bufio"
	"context"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// The benchmarks below compare one execute_command round trip through the
// real binary with the floor: a bare fork/exec of the same command from Go.
// Run them side by side in one invocation and compare ratios:
//
//	go test -run '^$' -bench 'Floor|RoundTrip' -benchtime 2000x ./cmd/rigout

func BenchmarkFloorShTrue(b *testing.B) {
	for b.Loop() {
		if err := osexec.Command("sh", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFloorBashTrue(b *testing.B) {
	for b.Loop() {
		if err := osexec.Command("bash", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFloorTrue(b *testing.B) {
	for b.Loop() {
		if err := osexec.Command("true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

func benchRoundTrip(b *testing.B, s *server, args map[string]any) {
	var req mcp.CallToolRequest
	req.Params.Name = "execute_command"
	req.Params.Arguments = args
	ctx := context.Background()
	// Warm up: the first calls pay for lazy initialisation.
	for range 20 {
		if _, err := s.client.CallTool(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		res, err := s.client.CallTool(ctx, req)
		if err != nil || res.IsError {
			b.Fatalf("%v %v", err, res)
		}
	}
}

func BenchmarkRoundTripStdioShell(b *testing.B) {
	benchRoundTrip(b, startStdio(b), map[string]any{"command": "true"})
}

func BenchmarkRoundTripStdioArgv(b *testing.B) {
	benchRoundTrip(b, startStdio(b), map[string]any{"argv": []string{"true"}})
}

func BenchmarkRoundTripHTTPShell(b *testing.B) {
	benchRoundTrip(b, startHTTP(b), map[string]any{"command": "true"})
}

func BenchmarkRoundTripHTTPArgv(b *testing.B) {
	benchRoundTrip(b, startHTTP(b), map[string]any{"argv": []string{"true"}})
}

// BenchmarkListToolsStdio and BenchmarkListToolsHTTP measure a protocol
// round trip that runs no process: the transport's own cost.
func BenchmarkListToolsStdio(b *testing.B) {
	b.Run("2025-11-25", func(b *testing.B) { benchListTools(b, startStdioVersion(b, "2025-11-25")) })
	b.Run(mcp.LATEST_PROTOCOL_VERSION, func(b *testing.B) { benchListTools(b, startStdio(b)) })
}

func BenchmarkListToolsHTTP(b *testing.B) { benchListTools(b, startHTTP(b)) }

func benchListTools(b *testing.B, s *server) {
	for b.Loop() {
		if _, err := s.client.ListTools(context.Background(), mcp.ListToolsRequest{}); err != nil {
			b.Fatal(err)
		}
	}
}

// rawStdio is a minimal JSON-RPC client over the binary's stdin and
// stdout: one line out, one line back. mcp-go's stdio client costs a few
// hundred microseconds per call on its own, which would be charged to
// rigout; this one costs about what the pipes do.
type rawStdioClient struct {
	in  io.WriteCloser
	out *bufio.Reader
	cmd *osexec.Cmd
}

func startRawStdio(b *testing.B, args ...string) *rawStdioClient {
	b.Helper()
	cmd := osexec.Command(rigoutBinary(b), append([]string{"stdio", "--no-ssh"}, args...)...)
	cmd.Env = append(os.Environ(), "RIGOUT_STATE_DIR="+b.TempDir())
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	c := &rawStdioClient{in: in, out: bufio.NewReaderSize(out, 1<<20), cmd: cmd}
	b.Cleanup(func() { in.Close(); _ = cmd.Wait() })
	c.call(b, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	if _, err := io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		b.Fatal(err)
	}
	return c
}

func (c *rawStdioClient) call(b *testing.B, line string) string {
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		b.Fatal(err)
	}
	resp, err := c.out.ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	return resp
}

// BenchmarkRawStdio measures ping and execute_command argv [true] over the
// binary's stdio with the minimal client, with the ledger's default
// durability (synchronous=FULL) and with unsafe_sync_normal; compare with
// BenchmarkFloorTrue in the same run:
//
//	go test -run '^$' -bench 'RawStdio|FloorTrue$' -benchtime 1000x ./cmd/rigout
func BenchmarkRawStdio(b *testing.B) {
	normal := filepath.Join(b.TempDir(), "normal.json")
	if err := os.WriteFile(normal, []byte(`{"audit": {"unsafe_sync_normal": true}}`), 0o600); err != nil {
		b.Fatal(err)
	}
	for _, mode := range []struct {
		name string
		args []string
	}{{"sync=full", nil}, {"sync=normal", []string{"--config", normal}}} {
		c := startRawStdio(b, mode.args...)
		for _, tt := range []struct{ name, line string }{
			{"ping", `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
			{"execute_true", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"execute_command","arguments":{"argv":["true"]}}}`},
		} {
			b.Run(mode.name+"/"+tt.name, func(b *testing.B) {
				for range 20 {
					c.call(b, tt.line)
				}
				for b.Loop() {
					if resp := c.call(b, tt.line); strings.Contains(resp, `"isError":true`) || strings.Contains(resp, `"error"`) {
						b.Fatalf("response: %s", resp)
					}
				}
			})
		}
	}
}
