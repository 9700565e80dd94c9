package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"

	"github.com/rigout/rigout/assembly"
	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/postgres"
	"github.com/rigout/rigout/config"
)

// gatewayLedger is what the gateway needs of an audit ledger, SQLite or
// PostgreSQL: the write and read sides, the argument digest, health.
type gatewayLedger = assembly.Ledger

// postgresConfig reads the PostgreSQL ledger settings of the file
// (assembly.PostgresConfig), through the secrets moved off the
// environment when there are.
func (c *common) postgresConfig(readOnly bool, logger *slog.Logger) (postgres.Config, error) {
	getenv := os.Getenv
	if c.sec != nil {
		getenv = c.sec.getenv
	}
	return assembly.PostgresConfig(c.file.Audit, getenv, readOnly, logger)
}

// chainKey reads the ledger's chain key: see config.Audit.ChainKey.
func chainKey(a config.Audit, getenv func(string) string) ([]byte, error) {
	return a.ChainKey(getenv)
}

// auditReader is what rigout audit tail, query and stats read.
type auditReader interface {
	audit.Querier
	Stats(ctx context.Context, f audit.Filter) ([]audit.ToolStats, error)
}

// runAuditPostgres runs a rigout audit command against the PostgreSQL
// ledger when the configuration names one; ok is false when it does not.
func runAuditPostgres(ctx context.Context, cmd string, f *auditFlags, stdout, stderr io.Writer) (code int, ok bool) {
	if f.configPath == "" || f.auditDB != "" { // an explicit --audit-db reads that SQLite file
		return 0, false
	}
	file, err := config.Load(f.configPath)
	if err != nil {
		fmt.Fprintf(stderr, "rigout audit %s: %v\n", cmd, err)
		return 1, true
	}
	if file.Audit.Postgres == "" {
		return 0, false
	}
	if cmd == "prune" {
		fmt.Fprintf(stderr, "rigout audit prune: not offered for the PostgreSQL ledger; retention there is the database's (see docs/AUDIT.md)\n")
		return 2, true
	}
	c := &common{file: file}
	cfg, err := c.postgresConfig(cmd != "export", nil)
	if err != nil {
		fmt.Fprintf(stderr, "rigout audit %s: %v\n", cmd, err)
		return 1, true
	}
	if cmd == "export" {
		cfg.Gateway = "cli"
		if file.Audit.Gateway != "" {
			cfg.Gateway = file.Audit.Gateway
		}
	}
	l, err := postgres.Open(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "rigout audit %s: %v\n", cmd, err)
		return 1, true
	}
	defer l.Close()
	switch cmd {
	case "verify":
		err = auditVerifyPostgres(ctx, l, f, stdout)
	case "tail":
		err = auditTail(ctx, l, f, stdout)
	case "query":
		f.filter.Limit = f.limit
		err = auditQuery(ctx, l, f, stdout, stderr)
	case "stats":
		err = auditStats(ctx, l, f, stdout)
	case "export":
		err = auditExportPostgres(ctx, l, f, stdout, stderr)
	}
	if err != nil {
		var te *postgres.TamperError
		if !errors.As(err, &te) {
			fmt.Fprintf(stderr, "rigout audit %s: %v\n", cmd, err)
		}
		return 1, true
	}
	return 0, true
}

func auditVerifyPostgres(ctx context.Context, l *postgres.Ledger, f *auditFlags, stdout io.Writer) error {
	rep, err := l.Verify(ctx)
	var te *postgres.TamperError
	if err != nil && !errors.As(err, &te) {
		return err
	}
	if f.json {
		out := struct {
			OK bool   `json:"ok"`
			DB string `json:"db"`
			postgres.VerifyReport
		}{rep.OK(), l.Label(), rep}
		if e := json.NewEncoder(stdout).Encode(out); e != nil {
			return e
		}
		return err
	}
	if te != nil {
		fmt.Fprintf(stdout, "FAILED at seq %d: %s: %s\n", te.Seq, te.Kind, te.Detail)
	} else {
		fmt.Fprintln(stdout, "ok: the chain is intact")
	}
	fmt.Fprintf(stdout, "database:  %s (PostgreSQL)\n", l.Label())
	if rep.Rows == 0 {
		fmt.Fprintln(stdout, "rows:      none")
	} else {
		fmt.Fprintf(stdout, "rows:      %d (seq %d-%d)\n", rep.Rows, rep.FirstSeq, rep.LastSeq)
	}
	switch {
	case rep.KeyID == "":
		fmt.Fprintln(stdout, "key:       not given (audit.key_env): keyed rows cannot be checked")
	case rep.KeyedFrom > 0:
		fmt.Fprintf(stdout, "key:       id %s, rows from seq %d linked under it\n", rep.KeyID, rep.KeyedFrom)
	default:
		fmt.Fprintf(stdout, "key:       id %s, no row linked under it\n", rep.KeyID)
	}
	names := slices.Sorted(maps.Keys(rep.Gateways))
	for _, g := range names {
		fmt.Fprintf(stdout, "gateway:   %s: %d rows, head at seq %d\n", g, rep.Gateways[g], rep.Heads[g])
	}
	if rep.LastHash != "" {
		fmt.Fprintf(stdout, "last hash: %s (keep it elsewhere to detect a rewrite later)\n", rep.LastHash)
	}
	return err
}

func auditExportPostgres(ctx context.Context, l *postgres.Ledger, f *auditFlags, stdout, stderr io.Writer) error {
	return exportTo(f.out, stdout, stderr, func(w io.Writer) (exportSpan, error) {
		op := auditOperator()
		rep, err := l.Export(ctx, w, f.filter, postgres.Operator{Principal: op.Principal, Transport: op.Transport})
		if err != nil {
			return exportSpan{}, err
		}
		return exportSpan{rep.Rows, rep.FirstSeq, rep.LastSeq, rep.Event.Seq}, nil
	})
}
