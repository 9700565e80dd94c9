package main

import (
	"context"
	"encoding/json"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	mcptransport "github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/rigout/rigout/internal/hostsfile"
)

// stdioIn runs `rigout stdio` on the given state directory and
// configuration file, and returns its initialized client.
func stdioIn(t *testing.T, stateDir, config string) *client.Client {
	t.Helper()
	tr := mcptransport.NewStdioWithOptions(rigoutBinary(t), nil, []string{"stdio", "--config", config},
		mcptransport.WithCommandFunc(func(ctx context.Context, command string, env []string, args []string) (*osexec.Cmd, error) {
			cmd := osexec.CommandContext(ctx, command, args...)
			cmd.Env = append(os.Environ(), "RIGOUT_STATE_DIR="+stateDir, "HOME="+stateDir)
			return cmd, nil
		}))
	if err := tr.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr)
	initialize(t, c, mcp.LATEST_PROTOCOL_VERSION)
	return c
}

func listedHosts(t *testing.T, c *client.Client) string {
	t.Helper()
	res := call(t, c, "manage_hosts", map[string]any{"action": "list"})
	if res.IsError {
		t.Fatalf("list: %s", resultText(res))
	}
	return resultText(res)
}

// TestManageHostsPersistsWhenOptedIn: with "persist_hosts", a host added
// through manage_hosts is in the owner-only hosts file and in the next
// run's list; removed, it is gone from both. Without the opt-in, nothing
// is written and the host is gone at the next start.
func TestManageHostsPersistsWhenOptedIn(t *testing.T) {
	state := t.TempDir()
	on := writeConfig(t, `{"ssh": {"persist_hosts": true}}`)
	off := writeConfig(t, `{}`)
	add := map[string]any{"action": "add", "host": "saved1", "address": "127.0.0.1", "port": 2222, "user": "deploy", "labels": []any{"web"}}

	c := stdioIn(t, state, off)
	if res := call(t, c, "manage_hosts", add); res.IsError || !strings.Contains(resultText(res), "for this run") {
		t.Fatalf("add without opt-in: %s", resultText(res))
	}
	c.Close()
	if _, err := os.Stat(filepath.Join(state, hostsfile.Name)); !os.IsNotExist(err) {
		t.Fatalf("a hosts file was written without the opt-in: %v", err)
	}
	c = stdioIn(t, state, off)
	if strings.Contains(listedHosts(t, c), "saved1") {
		t.Fatal("a host added without the opt-in outlived the run")
	}
	c.Close()

	c = stdioIn(t, state, on)
	if res := call(t, c, "manage_hosts", add); res.IsError || !strings.Contains(resultText(res), "outlasts a restart") {
		t.Fatalf("add: %s", resultText(res))
	}
	c.Close()
	path := filepath.Join(state, hostsfile.Name)
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("hosts file: %v %v, want mode 0600", fi, err)
	}
	var doc struct {
		Hosts []struct {
			Port int    `json:"port"`
			User string `json:"user"`
		} `json:"hosts"`
	}
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Hosts) != 1 || doc.Hosts[0].Port != 2222 || doc.Hosts[0].User != "deploy" {
		t.Fatalf("hosts file = %s (%v)", b, err)
	}

	c = stdioIn(t, state, on)
	if l := listedHosts(t, c); !strings.Contains(l, "saved1") {
		t.Fatalf("after a restart the saved host is missing: %s", l)
	}
	if res := call(t, c, "manage_hosts", map[string]any{"action": "remove", "host": "saved1"}); res.IsError || !strings.Contains(resultText(res), "also from") {
		t.Fatalf("remove: %s", resultText(res))
	}
	c.Close()
	c = stdioIn(t, state, on)
	defer c.Close()
	if l := listedHosts(t, c); strings.Contains(l, "saved1") {
		t.Fatalf("a removed host came back: %s", l)
	}
}
