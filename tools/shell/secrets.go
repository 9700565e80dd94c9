package shell

import (
	"context"
	"io"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rigout/rigout"
	"github.com/rigout/rigout/exec"
	"github.com/rigout/rigout/tools/internal/secretarg"
)

// secretsProperty is the input property execute_command has when the
// family has a credential store (Config.Credentials).
const secretsProperty = secretarg.Property

// injectSecrets resolves refs (ENV_NAME → alias) for the call and sets
// them on cmd: the values in cmd.Secrets, a scrubber of them on every
// output stream (which a background process keeps for its whole life:
// its spool is written through it), and the call's mask. env is the
// call's environment argument, which may not set a name refs sets. It
// returns an error result when the call must not run, and sets check's
// environment to env with the names (and a placeholder value) for the
// policy.
func (f *Family) injectSecrets(ctx context.Context, call *rigout.Call, refs, env map[string]string, cmd *exec.Command, checkEnv *map[string]string) *mcp.CallToolResult {
	r, res := secretarg.Resolve(ctx, call, f.cfg.Credentials, refs, env)
	if r == nil {
		return res
	}
	cmd.Secrets = r.Use.Env()
	set := r.Mask
	cmd.Scrub = func(w io.Writer) io.WriteCloser { return set.Scrubber(w) }
	*checkEnv = r.Use.PolicyEnv(env)
	return nil
}
