package rigout

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout/exec"
)

const manageHostsDescription = "SSH hosts: list them, test or describe one (route, reachability, the ssh command a person would paste), " +
	"add or remove a configured host (this run only), or trust a host key after checking its fingerprint."

var manageHostsInput = json.RawMessage(`{
  "type": "object",
  "properties": {
    "action": {"type": "string", "enum": ["list", "test", "describe", "add", "remove", "trust"]},
    "host": {"type": "string", "description": "test, describe, trust: a host as execute_command takes it. add, remove: the alias."},
    "address": {"type": "string", "description": "add: host name or IP to connect to."},
    "user": {"type": "string", "description": "add: remote login."},
    "port": {"type": "integer", "minimum": 1, "maximum": 65535},
    "key": {"type": "string", "description": "add: private key file."},
    "proxy_jump": {"type": "string", "description": "add: jump hosts, as ssh -J takes them."},
    "labels": {"type": "array", "items": {"type": "string"}, "description": "add: labels for fan-out selectors."},
    "fingerprint": {"type": "string", "description": "trust: the SHA256:… fingerprint you verified; without it, trust only shows the key."}
  },
  "required": ["action"],
  "additionalProperties": false
}`)

func (g *Gateway) manageHostsTool() Tool {
	return Tool{
		Name:        "manage_hosts",
		Description: manageHostsDescription,
		InputSchema: manageHostsInput,
		Risk:        Mutating,
		Handler:     g.manageHosts,
	}
}

type manageHostsArgs struct {
	Action      string   `json:"action"`
	Host        string   `json:"host"`
	Address     string   `json:"address"`
	User        string   `json:"user"`
	Port        int      `json:"port"`
	Key         string   `json:"key"`
	ProxyJump   string   `json:"proxy_jump"`
	Labels      []string `json:"labels"`
	Fingerprint string   `json:"fingerprint"`
}

func (g *Gateway) manageHosts(ctx context.Context, call *Call) (*mcp.CallToolResult, error) {
	var a manageHostsArgs
	if err := call.Bind(&a); err != nil {
		return nil, err
	}
	if g.router == nil {
		return ErrorResult("SSH hosts are not configured on this gateway; only host \"local\" is available"), nil
	}
	call.Outcome.Host = a.Host
	needHost := func() *mcp.CallToolResult {
		if a.Host == "" {
			call.Outcome.Status = "invalid"
			return ErrorResult("manage_hosts %s needs `host`", a.Action)
		}
		if err := g.principal(ctx).Scopes.RequireHost(a.Host); err != nil {
			call.Outcome.Status = "denied"
			return ErrorResult("%v", err)
		}
		return nil
	}
	who := g.principal(ctx).Name
	switch a.Action {
	case "list":
		return jsonResult(map[string]any{"hosts": g.router.List()})
	case "test":
		if res := needHost(); res != nil {
			return res, nil
		}
		t := g.router.Test(ctx, a.Host, who)
		call.Outcome.Route = t.Route
		out := map[string]any{"host": t.Host, "route": t.Route, "reachable": t.Reachable, "latency_ms": t.Latency.Milliseconds()}
		if t.HostKey != "" {
			out["host_key"] = t.HostKey
		}
		if t.Err != nil {
			out["error"] = t.Err.Error()
			res, _ := jsonResult(out)
			res.IsError = true
			return res, nil
		}
		return jsonResult(out)
	case "describe":
		if res := needHost(); res != nil {
			return res, nil
		}
		d, err := g.router.Describe(ctx, a.Host, who)
		if err != nil {
			return ErrorResult("describe %s: %v", a.Host, err), nil
		}
		call.Outcome.Route = d.Route
		return jsonResult(d)
	case "add":
		if res := needHost(); res != nil {
			return res, nil
		}
		h := exec.HostConfig{Name: a.Host, Address: a.Address, User: a.User, Port: a.Port, Key: a.Key, ProxyJump: a.ProxyJump, Labels: a.Labels}
		if err := g.router.Add(h); err != nil {
			call.Outcome.Status = "invalid"
			return ErrorResult("add %s: %v", a.Host, err), nil
		}
		return TextResult(fmt.Sprintf("added host %s for this run (it is not saved to the configuration file)", a.Host)), nil
	case "remove":
		if res := needHost(); res != nil {
			return res, nil
		}
		if err := g.router.Remove(a.Host); err != nil {
			return ErrorResult("remove %s: %v", a.Host, err), nil
		}
		return TextResult("removed host " + a.Host), nil
	case "trust":
		if res := needHost(); res != nil {
			return res, nil
		}
		return g.trustHost(ctx, call, a)
	}
	call.Outcome.Status = "invalid"
	return ErrorResult("unknown action %q", a.Action), nil
}

// trustHost records a host key only when the caller names the fingerprint
// it verified; without one it shows the key and records nothing, so an
// agent cannot trust a host on first sight by itself.
func (g *Gateway) trustHost(ctx context.Context, call *Call, a manageHostsArgs) (*mcp.CallToolResult, error) {
	if a.Fingerprint == "" {
		res, err := g.router.HostKey(ctx, a.Host)
		call.Outcome.Route = res.Address
		switch {
		case err != nil:
			return ErrorResult("trust %s: %v", a.Host, err), nil
		case res.AlreadyKnown:
			return TextResult(fmt.Sprintf("%s's %s key %s was already trusted", a.Host, res.KeyType, res.Fingerprint)), nil
		}
		return TextResult(fmt.Sprintf("%s (%s) shows a %s key with fingerprint %s. Nothing was recorded.\n"+
			"Check this fingerprint with the host's administrator or on its console (ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub), "+
			"then call manage_hosts again with action trust and fingerprint %s.",
			a.Host, res.Address, res.KeyType, res.Fingerprint, res.Fingerprint)), nil
	}
	res, err := g.router.Trust(ctx, a.Host, a.Fingerprint)
	call.Outcome.Route = res.Address
	switch {
	case err != nil:
		return ErrorResult("trust %s: %v", a.Host, err), nil
	case res.AlreadyKnown:
		return TextResult(fmt.Sprintf("%s's %s key %s was already trusted", a.Host, res.KeyType, res.Fingerprint)), nil
	}
	return TextResult(fmt.Sprintf("trusted %s (%s): %s %s, recorded in %s", a.Host, res.Address, res.KeyType, res.Fingerprint, res.File)), nil
}

// jsonResult renders v as an indented JSON text result.
func jsonResult(v any) (*mcp.CallToolResult, error) {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return nil, err
	}
	return TextResult(string(b)), nil
}
