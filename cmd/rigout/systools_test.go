package main

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

func toolNames(t *testing.T, s *server) ([]string, int) {
	t.Helper()
	l, err := s.client.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range l.Tools {
		names = append(names, tl.Name)
	}
	b, _ := json.Marshal(l)
	return names, len(b)
}

// TestSysToolsFamilies: by default the binary serves none of the system,
// docker and packages families and keeps tools/list under 10 KiB; they come
// with their flags or the configuration file.
func TestSysToolsFamilies(t *testing.T) {
	names, size := toolNames(t, startStdio(t))
	if slices.Contains(names, "system_monitoring") || slices.Contains(names, "get_hardware_info") ||
		slices.Contains(names, "docker_operations") || slices.Contains(names, "install_software") {
		t.Errorf("default tools: %v", names)
	}
	if size > 10<<10 {
		t.Errorf("default tools/list is %d bytes, budget 10 KiB", size)
	}
	t.Logf("default tools/list: %d tools, %d bytes", len(names), size)

	names, size = toolNames(t, startStdio(t, "--enable-docker", "--enable-packages"))
	for _, want := range []string{"docker_operations", "install_software", "environment_setup"} {
		if !slices.Contains(names, want) {
			t.Errorf("flags: no %s in %v", want, names)
		}
	}
	if slices.Contains(names, "system_monitoring") {
		t.Errorf("system tools without --enable-system-tools: %v", names)
	}
	t.Logf("docker and packages on, system off: %d tools, %d bytes", len(names), size)

	names, _ = toolNames(t, startStdio(t, "--enable-system-tools"))
	if !slices.Contains(names, "system_monitoring") || !slices.Contains(names, "get_hardware_info") {
		t.Errorf("--enable-system-tools: %v", names)
	}

	cfg := writeConfig(t, `{"tool_families": {"system": true, "packages": true, "pip_options": ["--no-index"]}}`)
	names, _ = toolNames(t, startStdio(t, "--config", cfg))
	if !slices.Contains(names, "install_software") || !slices.Contains(names, "get_hardware_info") || slices.Contains(names, "docker_operations") {
		t.Errorf("config: %v", names)
	}
}
