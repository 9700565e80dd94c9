package postgres_test

import (
	"context"
	"fmt"
	"os"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/postgres"
)

// Two gateways share one ledger: each names itself, the password and the
// chain key come from the gateway's environment (never the commands'), and
// intent rows are committed before the command runs.
func Example() {
	ctx := context.Background()
	l, err := postgres.Open(ctx, postgres.Config{
		DSN:      "postgres://rigout@db.internal:5432/rigout?sslmode=verify-full",
		Password: os.Getenv("RIGOUT_AUDIT_PASSWORD"),
		ChainKey: []byte(os.Getenv("RIGOUT_AUDIT_KEY")),
		Gateway:  "gw-eu-1",
	})
	if err != nil {
		fmt.Println("not serving: the ledger is unavailable:", err)
		return
	}
	defer l.Close()
	intent := audit.Event{Type: audit.TypeToolCall, Phase: audit.PhaseIntent, CallID: "c1",
		Principal: "ci-bot", Tool: "execute_command", Host: "local", Status: audit.StatusStarted}
	if err := l.Record(ctx, intent); err != nil {
		fmt.Println("not run:", err) // fail closed
		return
	}
	rep, err := l.Verify(ctx)
	fmt.Println(rep.Rows, rep.Gateways, err)
}
