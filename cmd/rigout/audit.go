package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rigout/rigout/audit"
	"github.com/rigout/rigout/audit/sqlite"
	"github.com/rigout/rigout/config"
	"github.com/rigout/rigout/internal/statedir"
)

const auditUsage = `usage: rigout audit <command> [flags]

Commands:
  verify                          check the hash chain; exit 1 if a row was edited, deleted,
                                  reordered or truncated, naming the first bad row
  tail [-n N] [--follow]          the last N events (default 20); --follow prints new ones
  query [filters] [--limit N]     events matching the filters, oldest first (at most 1000 unless --limit)
  stats [filters]                 calls, denials, errors, unfinished calls, p50/p95 latency per tool
  export [filters] [--out FILE]   write events with their hashes as JSON lines (recorded in the ledger)
  export --follow [--cursor-file FILE] [--out FILE]
                                  keep writing new events as JSON lines, each once, resuming after
                                  the seq stored in FILE (for Vector, Fluent Bit, Promtail)
  prune --before TIME             delete the events older than TIME (recorded in the ledger)

Flags of every command:
  --state-dir DIR   state directory (default $RIGOUT_STATE_DIR, else $XDG_STATE_HOME/rigout,
                    else ~/.local/state/rigout, for root /var/lib/rigout); the ledger is DIR/audit.db
  --audit-db FILE   the ledger file, overriding --state-dir
  --config FILE     with "audit": {"postgres": DSN} in it, the PostgreSQL ledger instead, unless
                    --audit-db is given (default $RIGOUT_CONFIG; prune is not offered there)
  --json            JSON instead of tables (one object per line for tail, query and export)

Filters: --tool, --host, --principal, --status, --type (a trailing * matches a prefix),
  --call-id, --session, --since TIME, --until TIME.
TIME is RFC 3339 (2026-01-02T15:04:05Z), a UTC date (2026-01-02), or an age (90m, 36h, 30d).

Exit status: 0 success, 1 failure (including a broken chain), 2 usage error.
`

// auditFlags holds the flags of one rigout audit command.
type auditFlags struct {
	stateDir, auditDB string
	json              bool
	filter            audit.Filter
	since, until      string
	n, limit          int
	follow            bool
	interval          time.Duration
	out, before       string
	format            string // export: jsonl
	cursorFile        string // export --follow
	afterSeq          int64  // export: only events after this seq
	configPath        string
}

// runAudit runs "rigout audit ARGS" and returns the exit status.
func runAudit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, auditUsage)
		return 2
	}
	cmd, args := args[0], args[1:]
	switch cmd {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, auditUsage)
		return 0
	case "verify", "tail", "query", "stats", "export", "prune":
	default:
		fmt.Fprintf(stderr, "rigout audit: unknown command %q\n\n%s", cmd, auditUsage)
		return 2
	}
	var f auditFlags
	fset := flag.NewFlagSet("rigout audit "+cmd, flag.ContinueOnError)
	fset.SetOutput(stderr)
	fset.Usage = func() {
		fmt.Fprintf(stderr, "usage: rigout audit %s [flags]\n", cmd)
		fset.PrintDefaults()
	}
	fset.StringVar(&f.stateDir, "state-dir", "", "state directory holding audit.db")
	fset.StringVar(&f.auditDB, "audit-db", "", "ledger file (overrides --state-dir)")
	fset.BoolVar(&f.json, "json", false, "print JSON")
	fset.StringVar(&f.configPath, "config", os.Getenv("RIGOUT_CONFIG"), `configuration file; with "audit": {"postgres": …} the ledger is read there (env RIGOUT_CONFIG)`)
	switch cmd {
	case "tail":
		fset.IntVar(&f.n, "n", 20, "number of events")
		fset.BoolVar(&f.follow, "follow", false, "keep printing new events until interrupted")
		fset.DurationVar(&f.interval, "interval", 500*time.Millisecond, "poll interval of --follow")
	case "query", "stats", "export":
		fset.StringVar(&f.filter.Tool, "tool", "", "only this tool")
		fset.StringVar(&f.filter.Host, "host", "", "only this target host")
		fset.StringVar(&f.filter.Principal, "principal", "", "only this principal (token name)")
		fset.Func("status", "only this status (ok, error, denied, ...)", func(s string) error {
			f.filter.Status = audit.Status(s)
			return nil
		})
		fset.Func("type", "only this event type; a trailing * matches a prefix", func(s string) error {
			f.filter.Type = audit.EventType(s)
			return nil
		})
		fset.StringVar(&f.filter.CallID, "call-id", "", "only this call")
		fset.StringVar(&f.filter.Session, "session", "", "only this MCP session")
		fset.StringVar(&f.since, "since", "", "only events at or after TIME")
		fset.StringVar(&f.until, "until", "", "only events before TIME")
		if cmd == "query" {
			fset.IntVar(&f.limit, "limit", 1000, "at most this many events (0: no limit)")
		}
		if cmd == "export" {
			fset.StringVar(&f.out, "out", "", "write to FILE (created, never overwritten; appended to with --follow) instead of stdout")
			fset.StringVar(&f.format, "format", "jsonl", "output format: jsonl, one event per line")
			fset.BoolVar(&f.follow, "follow", false, "keep exporting new events as they are committed, until interrupted (reads the ledger only; records no export row)")
			fset.DurationVar(&f.interval, "interval", 500*time.Millisecond, "poll interval of --follow")
			fset.StringVar(&f.cursorFile, "cursor-file", "", "with --follow: resume after the seq stored in FILE, and store the last exported seq there after each batch")
			fset.Int64Var(&f.filter.AfterSeq, "after-seq", 0, "only events with a seq greater than N")
		}
	case "prune":
		fset.StringVar(&f.before, "before", "", "delete the events older than TIME (required)")
	}
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fset.NArg() > 0 {
		fmt.Fprintf(stderr, "rigout audit %s: unexpected argument %q\n", cmd, fset.Arg(0))
		return 2
	}
	now := time.Now()
	var err error
	if f.filter.Since, err = parseAuditTime(f.since, now); err != nil {
		fmt.Fprintf(stderr, "rigout audit %s: --since: %v\n", cmd, err)
		return 2
	}
	if f.filter.Until, err = parseAuditTime(f.until, now); err != nil {
		fmt.Fprintf(stderr, "rigout audit %s: --until: %v\n", cmd, err)
		return 2
	}
	if cmd == "tail" && f.n < 0 || cmd == "query" && f.limit < 0 || f.follow && f.interval <= 0 {
		fmt.Fprintf(stderr, "rigout audit %s: counts and intervals must be positive\n", cmd)
		return 2
	}
	var before time.Time
	if cmd == "prune" {
		if f.before == "" {
			fmt.Fprintln(stderr, "rigout audit prune: --before TIME is required")
			return 2
		}
		if before, err = parseAuditTime(f.before, now); err != nil {
			fmt.Fprintf(stderr, "rigout audit prune: --before: %v\n", err)
			return 2
		}
	}

	if code, ok := runAuditPostgres(ctx, cmd, &f, stdout, stderr); ok {
		return code
	}
	path, err := auditPath(f.stateDir, f.auditDB)
	if err != nil {
		fmt.Fprintf(stderr, "rigout audit %s: %v\n", cmd, err)
		return 1
	}
	if cmd == "export" {
		if err := checkExportFormat(f.format); err != nil {
			fmt.Fprintf(stderr, "rigout audit export: %v\n", err)
			return 2
		}
		if f.cursorFile != "" && !f.follow {
			fmt.Fprintln(stderr, "rigout audit export: --cursor-file needs --follow")
			return 2
		}
		f.afterSeq = f.filter.AfterSeq
	}
	writes := cmd == "export" && !f.follow || cmd == "prune"
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(stderr, "rigout audit %s: no audit ledger at %s (see --state-dir, --audit-db)\n", cmd, path)
		return 1
	}
	// The chain key, when the configuration gives it rather than the key
	// file beside the ledger.
	var (
		key    []byte
		anchor string
	)
	if f.configPath != "" && f.auditDB == "" {
		file, err := config.Load(f.configPath)
		if err == nil {
			key, err = chainKey(file.Audit, os.Getenv)
			anchor = file.Audit.AnchorFile
		}
		if err != nil {
			fmt.Fprintf(stderr, "rigout audit %s: %v\n", cmd, err)
			return 1
		}
	}
	l, err := sqlite.Open(ctx, sqlite.Config{Path: path, ReadOnly: !writes, ChainKey: key, AnchorPath: anchor})
	if err != nil {
		fmt.Fprintf(stderr, "rigout audit %s: %v\n", cmd, err)
		return 1
	}
	defer l.Close()

	switch cmd {
	case "verify":
		err = auditVerify(ctx, l, &f, stdout)
	case "tail":
		err = auditTail(ctx, l, &f, stdout)
	case "query":
		f.filter.Limit = f.limit
		err = auditQuery(ctx, l, &f, stdout, stderr)
	case "stats":
		err = auditStats(ctx, l, &f, stdout)
	case "export":
		if f.follow {
			err = auditExportFollow(ctx, l, &f, stdout)
		} else {
			err = auditExport(ctx, l, &f, stdout, stderr)
		}
	case "prune":
		err = auditPrune(ctx, l, before, &f, stdout)
	}
	if err != nil {
		var te *sqlite.TamperError
		if !errors.As(err, &te) { // verify has printed its finding
			fmt.Fprintf(stderr, "rigout audit %s: %v\n", cmd, err)
		}
		return 1
	}
	return 0
}

// auditPath returns the ledger file: --audit-db, else <state dir>/audit.db.
func auditPath(stateDir, auditDB string) (string, error) {
	if auditDB != "" {
		return filepath.Abs(auditDB)
	}
	dir, err := statedir.Resolve(stateDir, nil)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "audit.db"), nil
}

// parseAuditTime reads an RFC 3339 time, a UTC date, or an age before now
// ("90m", "36h", "30d"). The empty string is the zero time.
func parseAuditTime(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 {
			return now.Add(-time.Duration(n) * 24 * time.Hour), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q is not a time (2026-01-02T15:04:05Z, 2026-01-02) or an age (90m, 36h, 30d)", s)
}

// auditOperator names the person running a retention command.
func auditOperator() sqlite.Operator {
	name := strconv.Itoa(os.Getuid())
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	return sqlite.Operator{Principal: "os:" + name, Transport: "cli"}
}

func auditVerify(ctx context.Context, l *sqlite.Ledger, f *auditFlags, stdout io.Writer) error {
	rep, err := l.Verify(ctx)
	var te *sqlite.TamperError
	if err != nil && !errors.As(err, &te) {
		return err
	}
	if f.json {
		out := struct {
			OK bool `json:"ok"`
			sqlite.VerifyReport
		}{rep.OK(), rep}
		if e := json.NewEncoder(stdout).Encode(out); e != nil {
			return e
		}
		return err
	}
	if te != nil {
		if te.Seq > 0 {
			fmt.Fprintf(stdout, "FAILED at seq %d: %s: %s\n", te.Seq, te.Kind, termText(te.Detail))
		} else {
			fmt.Fprintf(stdout, "FAILED: %s: %s\n", te.Kind, termText(te.Detail))
		}
	} else {
		fmt.Fprintln(stdout, "ok: the chain is intact")
	}
	switch {
	case rep.Rows == 0:
		fmt.Fprintln(stdout, "rows:      none")
	default:
		fmt.Fprintf(stdout, "rows:      %d (seq %d-%d)\n", rep.Rows, rep.FirstSeq, rep.LastSeq)
	}
	if rep.Pruned > 0 {
		fmt.Fprintf(stdout, "pruned:    seq 1-%d, by a recorded prune\n", rep.Pruned)
	}
	switch {
	case rep.KeyID == "":
		fmt.Fprintln(stdout, "key:       not available (the ledger's key file is missing or unreadable): keyed rows cannot be checked")
	case rep.KeyedFrom > 0:
		fmt.Fprintf(stdout, "key:       id %s, rows from seq %d chained under it\n", rep.KeyID, rep.KeyedFrom)
	default:
		fmt.Fprintf(stdout, "key:       id %s, no row chained under it\n", rep.KeyID)
	}
	switch {
	case rep.HeadSeq > 0 && rep.HeadKeyed:
		fmt.Fprintf(stdout, "head:      seq %d %s (keyed)\n", rep.HeadSeq, rep.HeadHash)
	case rep.HeadSeq > 0:
		fmt.Fprintf(stdout, "head:      seq %d %s (not checked: no key)\n", rep.HeadSeq, rep.HeadHash)
	default:
		fmt.Fprintln(stdout, "head:      missing or not keyed with the ledger's key")
	}
	if rep.AnchorSeq > 0 {
		fmt.Fprintf(stdout, "anchor:    seq %d\n", rep.AnchorSeq)
	}
	if rep.LastHash != "" {
		fmt.Fprintf(stdout, "last hash: %s (keep it elsewhere to detect a rewrite later)\n", rep.LastHash)
	}
	return err
}

func auditTail(ctx context.Context, l auditReader, f *auditFlags, stdout io.Writer) error {
	var evs []audit.Event
	if f.n > 0 {
		var err error
		if evs, err = l.Query(ctx, audit.Filter{Limit: f.n, Newest: true}); err != nil {
			return err
		}
	}
	p := newAuditPrinter(stdout, f.json)
	if err := p.events(evs); err != nil {
		return err
	}
	if !f.follow {
		return nil
	}
	var last int64
	if len(evs) > 0 {
		last = evs[len(evs)-1].Seq
	} else if tip, err := l.Query(ctx, audit.Filter{Limit: 1, Newest: true}); err != nil {
		return err
	} else if len(tip) > 0 {
		last = tip[0].Seq
	}
	t := time.NewTicker(f.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		evs, err := l.Query(ctx, audit.Filter{AfterSeq: last, Limit: 1000})
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if len(evs) == 0 {
			continue
		}
		last = evs[len(evs)-1].Seq
		if err := p.events(evs); err != nil {
			return err
		}
	}
}

func auditQuery(ctx context.Context, l auditReader, f *auditFlags, stdout, stderr io.Writer) error {
	evs, err := l.Query(ctx, f.filter)
	if err != nil {
		return err
	}
	if err := newAuditPrinter(stdout, f.json).events(evs); err != nil {
		return err
	}
	if f.filter.Limit > 0 && len(evs) == f.filter.Limit {
		fmt.Fprintf(stderr, "showing the first %d matching events; narrow the filters or use --limit 0 for all\n", len(evs))
	}
	return nil
}

func auditStats(ctx context.Context, l auditReader, f *auditFlags, stdout io.Writer) error {
	st, err := l.Stats(ctx, f.filter)
	if err != nil {
		return err
	}
	if f.json {
		if st == nil {
			st = []audit.ToolStats{}
		}
		return json.NewEncoder(stdout).Encode(st)
	}
	if len(st) == 0 {
		fmt.Fprintln(stdout, "no tool calls")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tCALLS\tDENIED\tERRORS\tUNFINISHED\tP50\tP95")
	for _, s := range st {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\n", termText(s.Tool), s.Calls, s.Denials, s.Errors, s.Unfinished,
			auditDuration(s.P50), auditDuration(s.P95))
	}
	return tw.Flush()
}

func auditExport(ctx context.Context, l *sqlite.Ledger, f *auditFlags, stdout, stderr io.Writer) error {
	return exportTo(f.out, stdout, stderr, func(w io.Writer) (exportSpan, error) {
		rep, err := l.Export(ctx, w, f.filter, auditOperator())
		if err != nil {
			return exportSpan{}, err
		}
		return exportSpan{rep.Rows, rep.FirstSeq, rep.LastSeq, rep.Event.Seq}, nil
	})
}

// exportSpan is what an export reports: how many events it wrote, their
// first and last seq, and the seq of the event that records the export.
type exportSpan struct{ rows, first, last, seq int64 }

// exportTo runs export into the file out (created, owner-only; never an
// existing one) or stdout when out is empty, and says on stderr what it
// wrote where.
func exportTo(out string, stdout, stderr io.Writer, export func(io.Writer) (exportSpan, error)) (err error) {
	w, dest := stdout, "stdout"
	if out != "" {
		file, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		defer func() {
			if cerr := file.Close(); err == nil {
				err = cerr
			}
		}()
		w, dest = file, out
	}
	sp, err := export(w)
	if err != nil {
		return err
	}
	span := ""
	if sp.rows > 0 {
		span = fmt.Sprintf(" (seq %d-%d)", sp.first, sp.last)
	}
	fmt.Fprintf(stderr, "exported %d events%s to %s; recorded as seq %d\n", sp.rows, span, dest, sp.seq)
	return nil
}

func auditPrune(ctx context.Context, l *sqlite.Ledger, before time.Time, f *auditFlags, stdout io.Writer) error {
	rep, err := l.Prune(ctx, before, auditOperator())
	if err != nil {
		return err
	}
	if f.json {
		return json.NewEncoder(stdout).Encode(struct {
			Rows     int64       `json:"rows"`
			FirstSeq int64       `json:"first_seq,omitempty"`
			LastSeq  int64       `json:"last_seq,omitempty"`
			Event    audit.Event `json:"event"`
		}{rep.Rows, rep.FirstSeq, rep.LastSeq, rep.Event})
	}
	cut := before.UTC().Format(time.RFC3339)
	if rep.Rows == 0 {
		fmt.Fprintf(stdout, "no events before %s; recorded as seq %d\n", cut, rep.Event.Seq)
		return nil
	}
	fmt.Fprintf(stdout, "pruned %d events (seq %d-%d) before %s; recorded as seq %d\n",
		rep.Rows, rep.FirstSeq, rep.LastSeq, cut, rep.Event.Seq)
	return nil
}

// auditPrinter prints events as a table or as JSON lines.
type auditPrinter struct {
	w      io.Writer
	json   bool
	header bool // whether the table header was printed
}

func newAuditPrinter(w io.Writer, asJSON bool) *auditPrinter {
	return &auditPrinter{w: w, json: asJSON}
}

func (p *auditPrinter) events(evs []audit.Event) error {
	if p.json {
		enc := json.NewEncoder(p.w)
		for i := range evs {
			if err := enc.Encode(&evs[i]); err != nil {
				return err
			}
		}
		return nil
	}
	if len(evs) == 0 && !p.header {
		fmt.Fprintln(p.w, "no events")
		p.header = true
		return nil
	}
	tw := tabwriter.NewWriter(p.w, 0, 0, 2, ' ', 0)
	if !p.header {
		fmt.Fprintln(tw, "SEQ\tTIME (UTC)\tTYPE\tPHASE\tSTATUS\tPRINCIPAL\tTOOL\tHOST\tDURATION\tEXIT\tDETAIL")
		p.header = true
	}
	for _, e := range evs {
		exit := "-"
		switch {
		case e.ExitCode != nil:
			exit = strconv.Itoa(*e.ExitCode)
		case e.Signal != "":
			exit = e.Signal
		}
		detail := e.Error
		if e.Decision != "" && e.Decision != audit.DecisionAllow {
			detail = strings.TrimSpace(string(e.Decision) + " " + e.Rule + " " + detail)
		}
		// Every text cell is the ledger's, and much of it a client's: escaped.
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Seq,
			e.Time.UTC().Format("2006-01-02 15:04:05.000"), termText(string(e.Type)), auditDash(string(e.Phase)), auditDash(string(e.Status)),
			auditDash(e.Principal), auditDash(e.Tool), auditDash(e.Host), auditDuration(e.Duration), termText(exit), auditCell(detail, 60))
	}
	return tw.Flush()
}

// auditDuration prints a latency rounded for reading.
func auditDuration(d time.Duration) string {
	switch {
	case d == 0:
		return "-"
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(100 * time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}

// auditCell makes s fit one table cell: one line, at most n runes, control
// characters escaped.
func auditCell(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return termText(s)
}

// auditDash prints a ledger text cell: "-" when empty, escaped.
func auditDash(s string) string {
	if s == "" {
		return "-"
	}
	return termText(s)
}
