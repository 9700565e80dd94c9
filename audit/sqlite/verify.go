package sqlite

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/rigout/rigout/audit"
)

// reorderWindow is how far from its position Verify looks for the seq a
// row was written with, to tell a moved row from an edited one.
const reorderWindow = 256

// VerifyReport is the outcome of [Ledger.Verify].
type VerifyReport struct {
	Rows     int64  `json:"rows"`                // rows checked
	FirstSeq int64  `json:"first_seq,omitempty"` // first row present
	LastSeq  int64  `json:"last_seq,omitempty"`  // last row present
	LastHash string `json:"last_hash,omitempty"` // hash of the last row: the value to keep off-box
	Pruned   int64  `json:"pruned,omitempty"`    // rows before FirstSeq removed by a recorded prune
	HeadSeq  int64  `json:"head_seq,omitempty"`  // what the head file records; 0 if it is missing
	HeadHash string `json:"head_hash,omitempty"`
	// KeyID names the chain key Verify checked with ([audit.ChainKeyID]);
	// "" when it holds none (the key file is missing or unreadable).
	KeyID string `json:"key_id,omitempty"`
	// KeyedFrom is the first row chained under that key; 0 when none is.
	KeyedFrom int64 `json:"keyed_from,omitempty"`
	// AnchorSeq is what the anchor file ([Config.AnchorPath]) records; 0
	// without one.
	AnchorSeq int64 `json:"anchor_seq,omitempty"`
	// HeadKeyed reports that the head file's MAC verified under the key.
	HeadKeyed bool         `json:"head_keyed"`
	Problem   *TamperError `json:"problem,omitempty"` // the first bad row; nil if the chain is intact
}

// OK reports whether the chain verified.
func (r *VerifyReport) OK() bool { return r.Problem == nil }

// pruneDetail is the Detail of an [audit.TypePrune] event. LastSeq and LastHash
// anchor the chain: the first row kept has seq LastSeq+1 and prev_hash
// LastHash.
type pruneDetail struct {
	Before   string `json:"before"`
	Rows     int64  `json:"rows"`
	FirstSeq int64  `json:"first_seq,omitempty"`
	LastSeq  int64  `json:"last_seq,omitempty"`
	LastHash string `json:"last_hash,omitempty"`
}

// Verify walks the whole chain in one snapshot and checks that every row
// matches its hash (keyed with the chain key from the row that
// [audit.TypeChainKey] records, or from the first row), links to its
// predecessor, and follows it in sequence;
// that the first row starts the chain or follows rows removed by a recorded
// [Ledger.Prune]; and that the row recorded in the head file is present and
// unchanged and keyed with the chain key. It also reports the damage
// recorded by any [audit.TypeHeadMismatch] event. Rows chained under a key
// it does not hold (a lost or replaced key not given in
// [Config.RetiredChainKeys], or no key at all when the key file cannot be
// read) are reported as [TamperKeyUnknown]: they cannot be checked.
//
// It returns the report and, if the chain is broken, a [*TamperError]
// naming the first bad row (also in report.Problem). Other errors mean the
// ledger could not be read.
func (l *Ledger) Verify(ctx context.Context) (VerifyReport, error) {
	var rep VerifyReport
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return rep, ErrClosed
	}
	// The head is read before the snapshot starts: it is written after the
	// commit it names, so the snapshot contains that row.
	head, headSt, err := readHeadFile(l.headPath, l.chainKey)
	if err != nil {
		return rep, err
	}
	tx, err := l.rdb.BeginTx(ctx, nil)
	if err != nil {
		return rep, fmt.Errorf("sqlite: verify: %w", err)
	}
	defer tx.Rollback()
	v := verifier{ctx: ctx, tx: tx, anchors: map[int64][]byte{}, keys: map[string][]byte{}, reportedSeg: map[int64]bool{}}
	if l.chainKey != nil {
		rep.KeyID = audit.ChainKeyID(l.chainKey)
		v.keys[rep.KeyID] = l.chainKey
	}
	for _, k := range l.retired {
		v.keys[audit.ChainKeyID(k)] = k
	}
	// Without an audit.chain_key row the chain is keyed from seq 1 with
	// the key the head names: Verify's own, or, when the head names
	// another, a key it may not hold.
	leadID := rep.KeyID
	if headSt == headOtherKey {
		leadID = head.KeyID
	}
	if err := v.loadSegments(leadID); err != nil {
		return rep, fmt.Errorf("sqlite: verify: %w", err)
	}
	rep.KeyedFrom = v.keyedFrom(rep.KeyID)
	lastSeg := v.segmentOf(1 << 62)
	headFound := false
	switch headSt {
	case headKeyed:
		headFound, rep.HeadKeyed = true, true
	case headNoKey:
		headFound = true
	case headUnkeyed:
		headFound = lastSeg.unkeyed
		if !headFound {
			v.report(0, TamperUnkeyed, fmt.Sprintf("the head file %s is not keyed while the ledger is: it was written by someone without the key", l.headPath))
		}
	case headForged:
		v.report(0, TamperUnkeyed, fmt.Sprintf("the head file %s does not verify under the ledger's key (id %s): it was written by someone without the key", l.headPath, rep.KeyID))
	case headOtherKey:
		v.report(0, TamperKeyUnknown, fmt.Sprintf("the head file %s is keyed with key id %s, not with the ledger's key (id %s): it is stale, from another ledger, or forged", l.headPath, head.KeyID, rep.KeyID))
	}
	if headSt == headNoKey || l.chainKey == nil && !lastSeg.unkeyed {
		v.report(0, TamperKeyUnknown, fmt.Sprintf("the chain key is not available (the key file %s is missing or unreadable, and none was given): keyed rows and the head cannot be checked", l.secretPath))
	}
	if headFound {
		rep.HeadSeq, rep.HeadHash = head.Seq, hexHash(head.Hash)
	}
	var anchor headRecord
	anchorSt := headNone
	if l.anchorPath != "" {
		if anchor, anchorSt, err = readHeadFile(l.anchorPath, l.chainKey); err != nil {
			return rep, err
		}
		switch anchorSt {
		case headKeyed, headNoKey:
			rep.AnchorSeq = anchor.Seq
		case headNone:
		case headOtherKey:
			v.report(0, TamperKeyUnknown, fmt.Sprintf("the anchor %s is keyed with key id %s, not with the ledger's key (id %s)", l.anchorPath, anchor.KeyID, rep.KeyID))
		default:
			v.report(0, TamperUnkeyed, fmt.Sprintf("the anchor %s does not verify under the ledger's key (id %s): it was written by someone without the key", l.anchorPath, rep.KeyID))
		}
	}
	anchorFound := rep.AnchorSeq > 0
	rows, err := tx.QueryContext(ctx, `SELECT `+columns+` FROM events ORDER BY seq`)
	if err != nil {
		return rep, fmt.Errorf("sqlite: verify: %w", err)
	}
	var (
		prevSeq     int64
		prevHash    []byte
		firstPrev   []byte
		headChecked bool
	)
	for rows.Next() {
		r, err := scanEvent(rows)
		if err != nil {
			rows.Close()
			return rep, fmt.Errorf("sqlite: verify: %w", err)
		}
		selfOK := v.check(&r)
		switch {
		case rep.Rows == 0:
			rep.FirstSeq, firstPrev = r.Seq, r.prev
		case r.Seq != prevSeq+1:
			kind, why := TamperDeleted, "no prune records their removal"
			if mm, ok := mismatchOf(&r); ok && mm.Found == TamperTruncated && mm.LastSeq == prevSeq {
				kind, why = TamperTruncated, fmt.Sprintf("they were cut from the end of the ledger, as recorded at seq %d", r.Seq)
			}
			v.report(prevSeq+1, kind, fmt.Sprintf("rows %s are missing: %s", seqRange(prevSeq+1, r.Seq-1), why))
		case selfOK && !bytes.Equal(r.prev, prevHash):
			v.report(prevSeq, TamperEdited, fmt.Sprintf("row %d was rewritten: row %d is chained to a different hash", prevSeq, r.Seq))
		}
		if !selfOK && v.wants(r.Seq) {
			kind, detail := v.classify(&r)
			v.report(r.Seq, kind, detail)
		}
		if selfOK {
			v.noteEvent(&r)
		}
		if anchorFound && r.Seq == anchor.Seq && !bytes.Equal(r.hash, anchor.Hash[:]) {
			v.report(r.Seq, TamperEdited, fmt.Sprintf("row %d differs from the anchor's record of it: the chain was rewritten from here", r.Seq))
		}
		if headFound && r.Seq == head.Seq {
			headChecked = true
			if !bytes.Equal(r.hash, head.Hash[:]) {
				v.report(r.Seq, TamperEdited, fmt.Sprintf("row %d differs from the head file's record of it: the chain was rewritten from here", r.Seq))
			}
		}
		prevSeq, prevHash = r.Seq, r.hash
		rep.Rows++
		rep.LastSeq, rep.LastHash = r.Seq, r.Hash
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return rep, fmt.Errorf("sqlite: verify: %w", err)
	}

	switch {
	case rep.Rows == 0:
		if headFound {
			v.report(1, TamperTruncated, fmt.Sprintf("the ledger is empty but the head file records seq %d", head.Seq))
		}
	case rep.FirstSeq == 1:
		if !bytes.Equal(firstPrev, make([]byte, sha256.Size)) {
			v.report(1, TamperEdited, "row 1 does not start the chain: its previous hash is not zero")
		}
	default:
		if a, ok := v.anchors[rep.FirstSeq]; ok && bytes.Equal(a, firstPrev) {
			rep.Pruned = rep.FirstSeq - 1
		} else {
			start := int64(1)
			for k := range v.anchors {
				if k < rep.FirstSeq && k > start {
					start = k
				}
			}
			v.report(start, TamperDeleted, fmt.Sprintf("rows %s are missing and no prune records their removal", seqRange(start, rep.FirstSeq-1)))
		}
	}
	switch {
	case rep.Rows == 0:
	case !headFound:
		v.report(0, TamperHeadMissing, fmt.Sprintf("the head file %s is missing or unreadable: rows after seq %d may have been removed", l.headPath, rep.LastSeq))
	case head.Seq > rep.LastSeq:
		v.report(rep.LastSeq+1, TamperTruncated, fmt.Sprintf("the head file records seq %d but the ledger ends at seq %d: rows %s were removed", head.Seq, rep.LastSeq, seqRange(rep.LastSeq+1, head.Seq)))
	case head.Seq < rep.FirstSeq:
		if !v.prunedThrough(head.Seq) {
			v.report(head.Seq, TamperDeleted, fmt.Sprintf("row %d, recorded in the head file, is missing and no prune records its removal", head.Seq))
		}
	case !headChecked:
		// The row is in a gap, which is already reported.
	}
	switch {
	case l.anchorPath == "":
	case anchorSt == headNone && rep.Rows > 0:
		v.report(0, TamperHeadMissing, fmt.Sprintf("the anchor %s is missing or unreadable: the ledger may have been deleted and started again", l.anchorPath))
	case !anchorFound:
	case anchor.Seq > rep.LastSeq:
		v.report(rep.LastSeq+1, TamperTruncated, fmt.Sprintf("the anchor %s records seq %d but the ledger ends at seq %d: rows %s were removed, or the whole ledger was deleted", l.anchorPath, anchor.Seq, rep.LastSeq, seqRange(rep.LastSeq+1, anchor.Seq)))
	case anchor.Seq < rep.FirstSeq && !v.prunedThrough(anchor.Seq):
		v.report(anchor.Seq, TamperDeleted, fmt.Sprintf("row %d, recorded in the anchor %s, is missing and no prune records its removal", anchor.Seq, l.anchorPath))
	}
	rep.Problem = v.problem
	if v.problem != nil {
		return rep, v.problem
	}
	return rep, nil
}

// verifier holds Verify's state.
type verifier struct {
	ctx         context.Context
	tx          *sql.Tx
	anchors     map[int64][]byte  // seq → expected prev_hash, from prune events
	pruned      []int64           // LastSeq of each prune that removed rows
	keys        map[string][]byte // the chain keys Verify holds, by ID
	segs        []segment         // the chain's key segments, by start
	reportedSeg map[int64]bool    // segments reported as under an unknown key
	problem     *TamperError
}

// segment is a run of rows chained the same way: from start (1 for the
// first) to the next segment's start.
type segment struct {
	start   int64
	unkeyed bool   // audit.RowHash
	keyID   string // otherwise, the key's ID
	key     []byte // nil when Verify does not hold it
}

// loadSegments reads the audit.TypeChainKey rows and splits the chain into
// segments; without any, the chain is one segment keyed with the key
// keyID names. A marker whose key Verify holds counts only if it verifies
// under that key; a forged one is then checked, and fails, as a row of the
// segment before it.
func (v *verifier) loadSegments(keyID string) error {
	rows, err := v.tx.QueryContext(v.ctx, `SELECT `+columns+` FROM events WHERE type = ? ORDER BY seq`, audit.TypeChainKey)
	if err != nil {
		return err
	}
	defer rows.Close()
	var first *chainKeyDetail
	for rows.Next() {
		r, err := scanEvent(rows)
		if err != nil {
			return err
		}
		var d chainKeyDetail
		if json.Unmarshal([]byte(r.Detail), &d) != nil || d.KeyID == "" {
			continue
		}
		key, held := v.keys[d.KeyID]
		if held && !bytes.Equal(keyedHash(key, &r, r.Seq), r.hash) {
			continue
		}
		if first == nil {
			first = &d
		}
		v.segs = append(v.segs, segment{start: r.Seq, keyID: d.KeyID, key: key})
	}
	if err := rows.Err(); err != nil {
		return err
	}
	lead := segment{start: 1, keyID: keyID, key: v.keys[keyID]}
	if first != nil {
		lead = segment{start: 1, unkeyed: first.PreviousKeyID == "", keyID: first.PreviousKeyID, key: v.keys[first.PreviousKeyID]}
	}
	if len(v.segs) == 0 || v.segs[0].start > 1 {
		v.segs = append([]segment{lead}, v.segs...)
	}
	return nil
}

// segmentOf returns the segment holding seq.
func (v *verifier) segmentOf(seq int64) segment {
	s := v.segs[0]
	for _, g := range v.segs[1:] {
		if g.start > seq {
			break
		}
		s = g
	}
	return s
}

// keyedFrom returns the first row of the first segment chained under the
// key keyID names, or 0.
func (v *verifier) keyedFrom(keyID string) int64 {
	for _, g := range v.segs {
		if keyID != "" && !g.unkeyed && g.keyID == keyID {
			return g.start
		}
	}
	return 0
}

// check reports whether r matches its hash as its segment computes it. A
// row of a segment whose key Verify lacks cannot be checked: its segment
// is reported once, and the row counts as matching so that the links
// around it are still checked. An unkeyed row in a keyed segment is
// reported as such.
func (v *verifier) check(r *storedRow) bool {
	if len(r.prev) != sha256.Size || len(r.hash) != sha256.Size {
		return false
	}
	g := v.segmentOf(r.Seq)
	switch {
	case g.unkeyed:
		return bytes.Equal(v.rehash(r, r.Seq), r.hash)
	case g.key == nil:
		// A row that matches the unkeyed hash in a segment said to be
		// keyed was not written under any key.
		if u := audit.RowHash(&r.Event, [sha256.Size]byte(r.prev)); bytes.Equal(u[:], r.hash) {
			v.report(r.Seq, TamperUnkeyed, fmt.Sprintf("row %d is chained with the unkeyed hash where the ledger is keyed (key id %s): it was written or re-chained by someone without the key", r.Seq, g.keyID))
			return true
		}
		if !v.reportedSeg[g.start] {
			v.reportedSeg[g.start] = true
			id := g.keyID
			if id == "" {
				id = "unknown"
			}
			v.report(g.start, TamperKeyUnknown, fmt.Sprintf("rows from seq %d are chained under key id %s, which verify does not hold (a lost or retired key): they cannot be checked", g.start, id))
		}
		return true
	case bytes.Equal(v.rehash(r, r.Seq), r.hash):
		return true
	}
	prev := [sha256.Size]byte(r.prev)
	if h := audit.RowHash(&r.Event, prev); bytes.Equal(h[:], r.hash) && v.wants(r.Seq) {
		v.report(r.Seq, TamperUnkeyed, fmt.Sprintf("row %d is chained with the unkeyed hash where the ledger is keyed (key id %s): it was written or re-chained by someone without the key", r.Seq, g.keyID))
	}
	return false
}

// keyedHash is r's keyed hash under key as if written at seq.
func keyedHash(key []byte, r *storedRow, seq int64) []byte {
	prev := [sha256.Size]byte(r.prev)
	e := r.Event
	e.Seq = seq
	sum := audit.KeyedRowHash(key, &e, prev)
	return sum[:]
}

// report keeps the problem with the lowest seq; a problem with no seq ranks
// last.
func (v *verifier) report(seq int64, kind TamperKind, detail string) {
	if v.wants(seq) {
		v.problem = &TamperError{Seq: seq, Kind: kind, Detail: detail}
	}
}

func (v *verifier) wants(seq int64) bool {
	return v.problem == nil || seq != 0 && (v.problem.Seq == 0 || seq < v.problem.Seq)
}

// rehash is r's hash as its segment computes it, as if written at seq.
func (v *verifier) rehash(r *storedRow, seq int64) []byte {
	g := v.segmentOf(r.Seq)
	if !g.unkeyed && g.key != nil {
		return keyedHash(g.key, r, seq)
	}
	var prev [sha256.Size]byte
	copy(prev[:], r.prev)
	e := r.Event
	e.Seq = seq
	sum := audit.RowHash(&e, prev)
	return sum[:]
}

// classify tells a row written at another seq (moved) from an edited one:
// a moved row still matches its hash when hashed with its original seq.
func (v *verifier) classify(r *storedRow) (TamperKind, string) {
	if len(r.prev) == sha256.Size && len(r.hash) == sha256.Size {
		candidates := make([]int64, 0, 2*reorderWindow+1)
		var pred int64
		if err := v.tx.QueryRowContext(v.ctx, `SELECT seq FROM events WHERE row_hash = ?`, r.prev).Scan(&pred); err == nil {
			candidates = append(candidates, pred+1)
		}
		for d := int64(1); d <= reorderWindow; d++ {
			candidates = append(candidates, r.Seq-d, r.Seq+d)
		}
		for _, seq := range candidates {
			if seq > 0 && seq != r.Seq && bytes.Equal(v.rehash(r, seq), r.hash) {
				return TamperReordered, fmt.Sprintf("the row at seq %d was written as seq %d", r.Seq, seq)
			}
		}
	}
	return TamperEdited, fmt.Sprintf("row %d does not match its hash: a field was changed", r.Seq)
}

// noteEvent records what the ledger's own events say about the chain.
func (v *verifier) noteEvent(r *storedRow) {
	switch r.Type {
	case audit.TypePrune:
		var p pruneDetail
		if json.Unmarshal([]byte(r.Detail), &p) == nil && p.Rows > 0 {
			if h, err := hex.DecodeString(p.LastHash); err == nil {
				v.anchors[p.LastSeq+1] = h
				v.pruned = append(v.pruned, p.LastSeq)
			}
		}
	case audit.TypeHeadMismatch:
		mm, ok := mismatchOf(r)
		if !ok {
			v.report(r.Seq, TamperEdited, fmt.Sprintf("row %d records a head mismatch the ledger cannot parse", r.Seq))
			return
		}
		switch mm.Found {
		case TamperTruncated, TamperHeadMissing:
			v.report(mm.LastSeq+1, mm.Found, fmt.Sprintf("%s (recorded at seq %d)", mm.Description, r.Seq))
		default:
			v.report(mm.HeadSeq, mm.Found, fmt.Sprintf("%s (recorded at seq %d)", mm.Description, r.Seq))
		}
	}
}

func (v *verifier) prunedThrough(seq int64) bool {
	for _, last := range v.pruned {
		if last >= seq {
			return true
		}
	}
	return false
}

func mismatchOf(r *storedRow) (headMismatch, bool) {
	var mm headMismatch
	if r.Type != audit.TypeHeadMismatch {
		return mm, false
	}
	err := json.Unmarshal([]byte(r.Detail), &mm)
	return mm, err == nil && mm.Found != ""
}

func seqRange(a, b int64) string {
	if a == b {
		return fmt.Sprint(a)
	}
	return fmt.Sprintf("%d-%d", a, b)
}
