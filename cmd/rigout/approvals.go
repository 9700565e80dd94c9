package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	osexec "os/exec"
	"strings"
	"time"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/auth"
	"github.com/rigout/rigout/internal/runstate"
	"github.com/rigout/rigout/internal/statedir"
	"github.com/rigout/rigout/textsafe"
)

// approverTokenEnv holds the operator's token for `rigout approve`: a token
// with the approve scope, never the agent's own.
const approverTokenEnv = "RIGOUT_APPROVER_TOKEN"

// runApprovals is `rigout approvals` (list), `rigout approve ID` and
// `rigout deny ID`: it talks to the running gateway's approvals API with a
// token that holds the approve scope.
func runApprovals(ctx context.Context, verb string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("rigout "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	sd := fs.String("state-dir", "", "state directory of the running gateway (default as for rigout serve)")
	base := fs.String("url", "", "the gateway's base URL, e.g. http://127.0.0.1:8765 (default: the one running in the state directory)")
	tokenFile := fs.String("token-file", "", "file holding a token with the approve scope (default $"+approverTokenEnv+")")
	asJSON := fs.Bool("json", false, "print JSON")
	digest := fs.String("digest", "", "approve or deny only if the pending call's digest is this one (as rigout approvals showed it)")
	// Flags may come before or after the ID.
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if err == flag.ErrHelp {
				return 0
			}
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "rigout "+verb+": "+format+"\n", a...)
		return code
	}
	var id string
	switch {
	case verb == "approvals" && len(positional) == 0:
	case verb != "approvals" && len(positional) == 1:
		id = positional[0]
	case verb == "approvals":
		return fail(2, "unexpected argument %q", positional[0])
	default:
		return fail(2, "give exactly one approval ID (see rigout approvals)")
	}
	token := os.Getenv(approverTokenEnv)
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			return fail(2, "%v", err)
		}
		token = strings.TrimSpace(string(b))
	}
	if token == "" {
		return fail(2, "no token: set %s or --token-file to a token with the approve scope (not the agent's)", approverTokenEnv)
	}
	url := strings.TrimSuffix(*base, "/")
	if url == "" {
		dir, err := statedir.Resolve(*sd, nil)
		if err != nil {
			return fail(1, "%v", err)
		}
		st := runstate.Inspect(dir)
		if st.State != runstate.Running || st.Runtime == nil {
			return fail(1, "no gateway running in %s (%s); give --url", dir, st.State)
		}
		url = strings.TrimSuffix(st.Runtime.HealthURL, "/health")
	}
	api := &approvalsAPI{url: url + "/approvals", token: token}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()

	list, err := api.list(ctx)
	if err != nil {
		return fail(1, "%v", err)
	}
	if verb == "approvals" {
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			_ = enc.Encode(list)
			return 0
		}
		if len(list) == 0 {
			fmt.Fprintln(stdout, "no calls wait for an approval")
		}
		for _, p := range list {
			printPending(stdout, p)
		}
		return 0
	}
	var pa *rigout.PendingApproval
	for i := range list {
		if list[i].ID == id {
			pa = &list[i]
		}
	}
	if pa == nil {
		return fail(1, "no pending approval %s (unknown, already decided, or expired)", textsafe.Block(id, 64))
	}
	d := pa.Digest
	if *digest != "" {
		d = *digest
	}
	decided, err := api.decide(ctx, pa.ID, d, verb)
	if err != nil {
		return fail(1, "%v", err)
	}
	if *asJSON {
		_ = json.NewEncoder(stdout).Encode(decided)
		return 0
	}
	word := "approved"
	if verb == "deny" {
		word = "denied"
	}
	fmt.Fprintf(stdout, "%s %s (digest %s):\n", word, decided.ID, decided.Digest)
	printPending(stdout, decided)
	return 0
}

// printPending prints one pending approval, its text made safe for a
// terminal.
func printPending(w io.Writer, p rigout.PendingApproval) {
	safe := func(s string) string { return textsafe.Block(s, 2000) }
	bypass := ""
	if p.Bypass {
		bypass = ", bypass_security"
	}
	fmt.Fprintf(w, "%s  %s asks to run on %s (%s, rule %s%s), expires %s:\n", p.ID, safe(p.Principal), safe(p.Host),
		safe(p.Tool), safe(p.Rule), bypass, p.Expires.Local().Format(time.TimeOnly))
	fmt.Fprintf(w, "    %s\n", strings.ReplaceAll(safe(p.Command), "\n", "\n    "))
	if p.Dir != "" {
		fmt.Fprintf(w, "    in %s\n", safe(p.Dir))
	}
	fmt.Fprintf(w, "    held back: %s\n    digest %s\n", safe(p.Reason), p.Digest)
}

// approvalsAPI is the client of the gateway's /approvals.
type approvalsAPI struct {
	url, token string
}

func (a *approvalsAPI) do(ctx context.Context, method string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.url, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(b, &e) == nil && e.Error != "" {
			return fmt.Errorf("%s: %s", resp.Status, textsafe.Block(e.Error, 500))
		}
		return fmt.Errorf("%s: %s", resp.Status, textsafe.Block(string(b), 500))
	}
	return json.Unmarshal(b, out)
}

func (a *approvalsAPI) list(ctx context.Context) ([]rigout.PendingApproval, error) {
	var out struct {
		Approvals []rigout.PendingApproval `json:"approvals"`
	}
	err := a.do(ctx, http.MethodGet, nil, &out)
	return out.Approvals, err
}

func (a *approvalsAPI) decide(ctx context.Context, id, digest, verb string) (rigout.PendingApproval, error) {
	var out rigout.PendingApproval
	err := a.do(ctx, http.MethodPost, map[string]string{"id": id, "digest": digest, "decision": verb}, &out)
	return out, err
}

// notifyCommand returns an ApprovalConfig.Notify that runs line with
// /bin/sh -c, the pending approval as JSON on stdin; it is stopped when
// the approval is decided or expires.
func notifyCommand(line string, logger *slog.Logger) func(context.Context, rigout.PendingApproval) {
	return func(ctx context.Context, p rigout.PendingApproval) {
		b, _ := json.Marshal(p)
		cmd := osexec.CommandContext(ctx, "/bin/sh", "-c", line)
		cmd.Stdin = bytes.NewReader(b)
		cmd.WaitDelay = 2 * time.Second
		if out, err := cmd.CombinedOutput(); err != nil && ctx.Err() == nil {
			logger.Warn("approval notification command failed", "approval", p.ID, "err", err, "output", textsafe.FirstLine(string(out), 300))
		}
	}
}

// canApprove reports whether any configured token or OAuth client may
// decide held-back calls.
func canApprove(tokens []auth.Token, oc *auth.OAuthConfig) bool {
	for _, t := range tokens {
		if t.Scopes.Approve {
			return true
		}
	}
	if oc == nil {
		return false
	}
	if oc.RegistrationScopes.Approve {
		return true
	}
	for _, cl := range oc.Clients {
		if cl.Scopes.Approve {
			return true
		}
	}
	return false
}
