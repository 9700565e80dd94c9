package sqlitetest_test

import (
	"context"
	"testing"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/audit/sqlite/sqlitetest"
)

func TestOpen(t *testing.T) {
	l := sqlitetest.Open(t, func(c *sqlite.Config) { c.StoreArgs = true })
	if err := l.Record(context.Background(), audit.Event{Type: "a.b", Args: "x"}); err != nil {
		t.Fatal(err)
	}
	evs, err := l.Query(context.Background(), audit.Filter{})
	if err != nil || len(evs) != 1 || evs[0].Args != "x" {
		t.Fatalf("%+v %v", evs, err)
	}
}
