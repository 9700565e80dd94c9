package main

import (
	"context"
	"os/exec"
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
		if err := exec.Command("sh", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFloorBashTrue(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("bash", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFloorTrue(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("true").Run(); err != nil {
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
func BenchmarkListToolsStdio(b *testing.B) { benchListTools(b, startStdio(b)) }

func BenchmarkListToolsHTTP(b *testing.B) { benchListTools(b, startHTTP(b)) }

func benchListTools(b *testing.B, s *server) {
	for b.Loop() {
		if _, err := s.client.ListTools(context.Background(), mcp.ListToolsRequest{}); err != nil {
			b.Fatal(err)
		}
	}
}
