package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/rigout/rigout/audit"
)

// exportPage is how many rows Export reads per query.
const exportPage = 1000

// Operator names who performs a retention action. It fills the Principal,
// Transport and RemoteAddr of the event that records the action.
type Operator struct {
	Principal  string          // for the CLI, "os:" and the login name
	Transport  audit.Transport // for the CLI, audit.TransportCLI
	RemoteAddr string
}

// PruneReport describes what [Ledger.Prune] removed.
type PruneReport struct {
	Rows     int64       // rows deleted
	FirstSeq int64       // first deleted seq; 0 if none
	LastSeq  int64       // last deleted seq; 0 if none
	Event    audit.Event // the audit.prune event that records the action
}

// Prune deletes the oldest rows, in seq order, up to the first row whose
// time is at or after before, and in the same transaction appends an
// [audit.TypePrune] event naming what it removed. That event anchors the chain:
// it records the seq and hash of the last deleted row, so Verify accepts the
// shortened chain and still detects any other deletion. Prune is an operator
// action; the ledger never deletes rows on its own.
func (l *Ledger) Prune(ctx context.Context, before time.Time, op Operator) (PruneReport, error) {
	var rep PruneReport
	if l.readOnly {
		return rep, ErrReadOnly
	}
	if before.IsZero() {
		return rep, fmt.Errorf("%w: prune needs a time", audit.ErrInvalidEvent)
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return rep, ErrClosed
	}
	err := l.write(func(c *chainWriter) error {
		rep = PruneReport{}
		cutoff := c.seq + 1
		var cut sql.NullInt64
		if err := c.q.QueryRowContext(c.ctx, `SELECT MIN(seq) FROM events WHERE time_ns >= ?`, clampNS(before)).Scan(&cut); err != nil {
			return err
		}
		if cut.Valid {
			cutoff = cut.Int64
		}
		d := pruneDetail{Before: before.UTC().Format(time.RFC3339Nano)}
		var first sql.NullInt64
		if err := c.q.QueryRowContext(c.ctx, `SELECT COUNT(*), MIN(seq) FROM events WHERE seq < ?`, cutoff).Scan(&d.Rows, &first); err != nil {
			return err
		}
		if d.Rows > 0 {
			var last []byte
			if err := c.q.QueryRowContext(c.ctx, `SELECT seq, row_hash FROM events WHERE seq < ? ORDER BY seq DESC LIMIT 1`, cutoff).Scan(&d.LastSeq, &last); err != nil {
				return err
			}
			d.FirstSeq, d.LastHash = first.Int64, fmtHash(last)
			if _, err := c.q.ExecContext(c.ctx, `DELETE FROM events WHERE seq < ?`, cutoff); err != nil {
				return err
			}
			// The statistics count what remains.
			clear(c.delta)
			clear(c.seqs)
			if err := rebuildStats(c.ctx, c.q); err != nil {
				return err
			}
			if err := rebuildSeqHours(c.ctx, c.q); err != nil {
				return err
			}
		}
		detail, err := json.Marshal(d)
		if err != nil {
			return err
		}
		e := audit.Event{Type: audit.TypePrune, Principal: op.Principal, Transport: op.Transport, RemoteAddr: op.RemoteAddr,
			Status: audit.StatusOK, Detail: string(detail)}
		if err := c.append(&e); err != nil {
			return err
		}
		rep = PruneReport{Rows: d.Rows, FirstSeq: d.FirstSeq, LastSeq: d.LastSeq, Event: e}
		return nil
	})
	if err != nil {
		return PruneReport{}, err
	}
	return rep, nil
}

// ExportReport describes what [Ledger.Export] wrote.
type ExportReport struct {
	Rows     int64       // events written
	FirstSeq int64       // first seq written; 0 if none
	LastSeq  int64       // last seq written; 0 if none
	Event    audit.Event // the audit.export event that records the action
}

// exportDetail is the Detail of an [audit.TypeExport] event.
type exportDetail struct {
	Tool      string       `json:"tool,omitempty"`
	Host      string       `json:"host,omitempty"`
	Principal string       `json:"principal,omitempty"`
	Status    audit.Status `json:"status,omitempty"`
	Type      string       `json:"type,omitempty"`
	Phase     string       `json:"phase,omitempty"`
	CallID    string       `json:"call_id,omitempty"`
	Session   string       `json:"session,omitempty"`
	Since     string       `json:"since,omitempty"`
	Until     string       `json:"until,omitempty"`
	AfterSeq  int64        `json:"after_seq,omitempty"`
	BeforeSeq int64        `json:"before_seq"`
	Limit     int          `json:"limit,omitempty"`
}

// Export writes the events matching f, with their hashes, to w as JSON
// lines, one [audit.Event] per line, in seq order. It first records an
// [audit.TypeExport] event naming the operator and the filter, and exports only
// rows before that event; if the record cannot be written nothing is
// exported. An exported range can be checked offline: each line's prev_hash
// is the previous line's hash.
func (l *Ledger) Export(ctx context.Context, w io.Writer, f audit.Filter, op Operator) (ExportReport, error) {
	var rep ExportReport
	if l.readOnly {
		return rep, ErrReadOnly
	}
	d := exportDetail{Tool: f.Tool, Host: f.Host, Principal: f.Principal, Status: f.Status, Type: string(f.Type), Phase: string(f.Phase),
		CallID: f.CallID, Session: f.Session, AfterSeq: f.AfterSeq, BeforeSeq: f.BeforeSeq, Limit: f.Limit}
	if !f.Since.IsZero() {
		d.Since = f.Since.UTC().Format(time.RFC3339Nano)
	}
	if !f.Until.IsZero() {
		d.Until = f.Until.UTC().Format(time.RFC3339Nano)
	}
	detail, err := json.Marshal(d)
	if err != nil {
		return rep, fmt.Errorf("sqlite: export: %w", err)
	}
	ev, err := l.append(context.WithoutCancel(ctx), audit.Event{Type: audit.TypeExport, Principal: op.Principal,
		Transport: op.Transport, RemoteAddr: op.RemoteAddr, Status: audit.StatusOK, Detail: string(detail)}, true)
	if err != nil {
		return rep, err
	}
	rep.Event = ev
	if f.BeforeSeq <= 0 || f.BeforeSeq > ev.Seq {
		f.BeforeSeq = ev.Seq
	}
	enc := json.NewEncoder(w)
	emit := func(evs []audit.Event) error {
		for i := range evs {
			if err := enc.Encode(&evs[i]); err != nil {
				return fmt.Errorf("sqlite: export: %w", err)
			}
			if rep.FirstSeq == 0 {
				rep.FirstSeq = evs[i].Seq
			}
			rep.LastSeq = evs[i].Seq
			rep.Rows++
		}
		return nil
	}
	if f.Limit > 0 {
		evs, err := l.Query(ctx, f)
		if err != nil {
			return rep, err
		}
		return rep, emit(evs)
	}
	f.Newest = false
	for {
		f.Limit = exportPage
		evs, err := l.Query(ctx, f)
		if err != nil {
			return rep, err
		}
		if err := emit(evs); err != nil {
			return rep, err
		}
		if len(evs) < exportPage {
			return rep, nil
		}
		f.AfterSeq = evs[len(evs)-1].Seq
	}
}
