package postgres

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rigout/rigout/audit"
)

// VerifyReport is the outcome of [Ledger.Verify].
type VerifyReport struct {
	Rows     int64            `json:"rows"`
	FirstSeq int64            `json:"first_seq,omitempty"`
	LastSeq  int64            `json:"last_seq,omitempty"`
	LastHash string           `json:"last_hash,omitempty"` // the value to keep off-box
	Gateways map[string]int64 `json:"gateways"`            // rows per gateway instance
	Heads    map[string]int64 `json:"heads"`               // each gateway's last committed seq, from rigout_audit_heads
	KeyID    string           `json:"key_id,omitempty"`    // the chain key Verify checked with; "" when it holds none
	// KeyedFrom is the first row linked under that key; 0 when none is.
	KeyedFrom int64        `json:"keyed_from,omitempty"`
	Problem   *TamperError `json:"problem,omitempty"`
}

// OK reports whether the chain verified.
func (r *VerifyReport) OK() bool { return r.Problem == nil }

// Verify walks the whole chain in one snapshot. Every row must match its
// [audit.RowHash] and its link (which covers the gateway name, and is keyed
// with the chain key from the row an [audit.TypeChainKey] event records,
// or from seq 1), chain to the row before it, and follow it in sequence
// from seq 1; each gateway's head (its last committed row) must be present,
// unchanged and carry a MAC under the chain key; rows linked under a key
// Verify does not hold are reported as [TamperKeyUnknown]; and any
// [audit.TypeHeadMismatch] event a gateway wrote on finding rows removed
// is reported. It returns the report and, if the chain is broken, a
// [*TamperError] naming the first bad row.
func (l *Ledger) Verify(ctx context.Context) (VerifyReport, error) {
	rep := VerifyReport{Gateways: map[string]int64{}, Heads: map[string]int64{}}
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return rep, ErrClosed
	}
	fail := func(err error) (VerifyReport, error) {
		return rep, fmt.Errorf("postgres: %s: verify: %w", l.label, err)
	}
	tx, err := l.pool.Begin(ctx)
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY`); err != nil {
		return fail(err)
	}
	type head struct {
		seq             int64
		hash, link, mac []byte
	}
	heads := map[string]head{}
	hr, err := tx.Query(ctx, `SELECT gateway, seq, hash, link, mac FROM rigout_audit_heads`)
	if err != nil {
		return fail(err)
	}
	for hr.Next() {
		var g string
		var h head
		if err := hr.Scan(&g, &h.seq, &h.hash, &h.link, &h.mac); err != nil {
			hr.Close()
			return fail(err)
		}
		heads[g] = h
		rep.Heads[g] = h.seq
	}
	hr.Close()
	if err := hr.Err(); err != nil {
		return fail(err)
	}
	headAt := map[int64][]byte{}
	for _, h := range heads {
		headAt[h.seq] = h.hash
	}

	var problem *TamperError
	report := func(seq int64, kind TamperKind, detail string) {
		if problem == nil || seq < problem.Seq {
			problem = &TamperError{Seq: seq, Kind: kind, Detail: detail}
		}
	}
	rep.KeyID = l.keyID
	segs, err := l.segments(ctx, tx)
	if err != nil {
		return fail(err)
	}
	for _, g := range segs {
		if g.keyed && g.key != nil && rep.KeyedFrom == 0 {
			rep.KeyedFrom = g.start
		}
	}
	unknownReported := map[int64]bool{}
	rows, err := tx.Query(ctx, `SELECT `+columns+` FROM rigout_audit_events ORDER BY seq`)
	if err != nil {
		return fail(err)
	}
	var prevSeq int64
	var prevHash, prevLink [sha256.Size]byte
	for rows.Next() {
		r, err := scanRow(rows)
		if err != nil {
			rows.Close()
			return fail(err)
		}
		if rep.Rows == 0 {
			rep.FirstSeq = r.Seq
		}
		if r.Seq != prevSeq+1 {
			report(prevSeq+1, TamperDeleted, fmt.Sprintf("rows %s are missing", seqRange(prevSeq+1, r.Seq-1)))
		}
		var stored, storedLink [sha256.Size]byte
		copy(stored[:], r.hash)
		copy(storedLink[:], r.link)
		want := audit.RowHash(&r.Event, toHash(r.prev))
		switch {
		case len(r.hash) != sha256.Size || want != stored:
			report(r.Seq, TamperEdited, fmt.Sprintf("row %d does not match its hash: a field was changed", r.Seq))
		case !bytes.Equal(r.prev, prevHash[:]):
			if r.Seq == 1 {
				report(1, TamperEdited, "row 1 does not start the chain: its previous hash is not zero")
			} else {
				report(r.Seq-1, TamperEdited, fmt.Sprintf("row %d was rewritten: row %d is chained to a different hash", r.Seq-1, r.Seq))
			}
		default:
			switch g := segmentOf(segs, r.Seq); {
			case !g.keyed:
				if chainLink(prevLink, stored, r.Gateway) != storedLink {
					report(r.Seq, TamperEdited, fmt.Sprintf("row %d does not match its link: its gateway (%q) was changed, or the chain was rewritten", r.Seq, r.Gateway))
				}
			case g.key == nil:
				if !unknownReported[g.start] {
					unknownReported[g.start] = true
					report(g.start, TamperKeyUnknown, fmt.Sprintf("rows from seq %d are linked under key id %s, which verify does not hold (no chain key given, or another one): they cannot be checked", g.start, g.keyID))
				}
			case keyedLink(g.key, prevLink, stored, r.Gateway) == storedLink:
			case chainLink(prevLink, stored, r.Gateway) == storedLink:
				report(r.Seq, TamperUnkeyed, fmt.Sprintf("row %d is linked without the chain key (id %s): it was written or re-chained by someone without the key", r.Seq, l.keyID))
			default:
				report(r.Seq, TamperEdited, fmt.Sprintf("row %d does not match its link: its gateway (%q) was changed, or the chain was rewritten", r.Seq, r.Gateway))
			}
		}
		if g := segmentOf(segs, r.Seq); g.keyed && g.key != nil {
			for name, h := range heads {
				if h.seq == r.Seq && !hmac.Equal(h.mac, headMAC(g.key, name, h.seq, toHash(h.hash), toHash(h.link))) {
					report(r.Seq, TamperUnkeyed, fmt.Sprintf("gateway %s's head (seq %d) does not verify under the chain key: it was written by someone without the key", name, h.seq))
				}
			}
		}
		if h, ok := headAt[r.Seq]; ok && !bytes.Equal(h, r.hash) {
			report(r.Seq, TamperEdited, fmt.Sprintf("row %d differs from a gateway's head record of it: the chain was rewritten", r.Seq))
		}
		if r.Type == audit.TypeHeadMismatch {
			var mm struct {
				LastSeq     int64  `json:"last_seq"`
				Description string `json:"description"`
			}
			json.Unmarshal([]byte(r.Detail), &mm)
			report(mm.LastSeq+1, TamperTruncated, fmt.Sprintf("%s (recorded at seq %d by %s)", mm.Description, r.Seq, r.Gateway))
		}
		rep.Gateways[r.Gateway]++
		prevSeq, prevHash, prevLink = r.Seq, stored, storedLink
		rep.Rows++
		rep.LastSeq, rep.LastHash = r.Seq, r.Hash
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	for g, h := range heads {
		if h.seq > rep.LastSeq {
			report(rep.LastSeq+1, TamperTruncated, fmt.Sprintf("gateway %s committed up to seq %d but the ledger ends at seq %d: rows %s were removed",
				g, h.seq, rep.LastSeq, seqRange(rep.LastSeq+1, h.seq)))
		}
	}
	rep.Problem = problem
	if problem != nil {
		return rep, problem
	}
	return rep, nil
}

// segment is a run of rows linked the same way, from start to the next
// segment's start.
type segment struct {
	start int64
	keyed bool   // keyedLink; otherwise chainLink
	keyID string // the key's ID when keyed
	key   []byte // nil when Verify does not hold it
}

// segments splits the chain at its audit.TypeChainKey rows. A marker
// naming Verify's key counts only if its link verifies under the key.
func (l *Ledger) segments(ctx context.Context, tx pgx.Tx) ([]segment, error) {
	rows, err := tx.Query(ctx, `SELECT e.seq, e.detail, e.row_hash, e.link, e.gateway, p.link
		FROM rigout_audit_events e LEFT JOIN rigout_audit_events p ON p.seq = e.seq - 1
		WHERE e.type = $1 ORDER BY e.seq`, audit.TypeChainKey)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var segs []segment
	var first *chainKeyDetail
	for rows.Next() {
		var (
			seq             int64
			detail, gw      string
			hash, link, prv []byte
		)
		if err := rows.Scan(&seq, &detail, &hash, &link, &gw, &prv); err != nil {
			return nil, err
		}
		var d chainKeyDetail
		if json.Unmarshal([]byte(detail), &d) != nil || d.KeyID == "" {
			continue
		}
		g := segment{start: seq, keyed: true, keyID: d.KeyID}
		if d.KeyID == l.keyID && l.chainKey != nil {
			if keyedLink(l.chainKey, toHash(prv), toHash(hash), gw) != toHash(link) {
				continue // forged: checked, and failed, as a row of the segment before
			}
			g.key = l.chainKey
		}
		if first == nil {
			first = &d
		}
		segs = append(segs, g)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	lead := segment{start: 1, keyed: true, keyID: l.keyID, key: l.chainKey}
	if first != nil {
		lead = segment{start: 1, keyed: first.PreviousKeyID != "", keyID: first.PreviousKeyID}
		if lead.keyed && first.PreviousKeyID == l.keyID {
			lead.key = l.chainKey
		}
	}
	if lead.keyID == "" && lead.keyed {
		lead.keyID = "unknown"
	}
	if len(segs) == 0 || segs[0].start > 1 {
		segs = append([]segment{lead}, segs...)
	}
	return segs, nil
}

// segmentOf returns the segment holding seq.
func segmentOf(segs []segment, seq int64) segment {
	s := segs[0]
	for _, g := range segs[1:] {
		if g.start > seq {
			break
		}
		s = g
	}
	return s
}

func toHash(b []byte) [sha256.Size]byte {
	var h [sha256.Size]byte
	copy(h[:], b)
	return h
}

func seqRange(a, b int64) string {
	if a == b {
		return fmt.Sprint(a)
	}
	return fmt.Sprintf("%d-%d", a, b)
}

// Operator names who runs an operator command such as an export.
type Operator struct {
	Principal string          // e.g. "os:alice"
	Transport audit.Transport // e.g. audit.TransportCLI
}

// ExportReport is the outcome of [Ledger.Export].
type ExportReport struct {
	Rows     int64
	FirstSeq int64
	LastSeq  int64
	Event    audit.Event // the audit.export event that records the export
}

// Export writes the rows matching f to w as JSON lines (each a [Row]: the
// event with its hashes, gateway and link) and records an
// [audit.TypeExport] event naming op and the filter, so an export is
// itself on record. The row hashes verify offline with [audit.RowHash].
func (l *Ledger) Export(ctx context.Context, w io.Writer, f audit.Filter, op Operator) (ExportReport, error) {
	var rep ExportReport
	if l.readOnly {
		return rep, ErrReadOnly
	}
	detail, _ := json.Marshal(struct {
		Filter audit.Filter `json:"filter"`
	}{f})
	ev, err := l.append(audit.Event{Type: audit.TypeExport, Principal: op.Principal, Transport: op.Transport,
		Status: audit.StatusOK, Detail: string(detail), Time: time.Now()}, true)
	if err != nil {
		return rep, err
	}
	rep.Event = ev
	if f.BeforeSeq == 0 || f.BeforeSeq > ev.Seq {
		f.BeforeSeq = ev.Seq // the export does not include its own record
	}
	rows, err := l.QueryRows(ctx, f, "")
	if err != nil {
		return rep, err
	}
	enc := json.NewEncoder(w)
	for i := range rows {
		if err := enc.Encode(&rows[i]); err != nil {
			return rep, err
		}
		if rep.Rows == 0 {
			rep.FirstSeq = rows[i].Seq
		}
		rep.LastSeq = rows[i].Seq
		rep.Rows++
	}
	return rep, nil
}
