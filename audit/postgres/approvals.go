package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rigout/rigout/audit"
)

// maxSharedApprovals bounds the rows of rigout_approvals: a gateway's own
// queue is bounded (rigout.ApprovalConfig.MaxPending), and rows whose
// call stopped waiting are deleted, so this only stops a runaway.
const maxSharedApprovals = 10000

// The Ledger keeps what the gateways sharing its database share about
// approvals (rigout.ApprovalStore): the operator approval queue, in
// rigout_approvals (a call held back on one gateway is listed and decided
// on any), and the spent elicitation nonces, in rigout_spent_nonces.
// Expiry is decided by the gateways' clocks, passed in.

// PutApproval stores a pending approval.
func (l *Ledger) PutApproval(ctx context.Context, r audit.ApprovalRecord) error {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	// Rows a gateway that died while its call waited left behind, an hour
	// after they expired.
	if _, err := l.pool.Exec(ctx, `DELETE FROM rigout_approvals WHERE expires_ns < $1`, r.Requested.Add(-time.Hour).UnixNano()); err != nil {
		return fmt.Errorf("postgres: %s: put approval: %w", l.label, err)
	}
	tag, err := l.pool.Exec(ctx, `INSERT INTO rigout_approvals (id, principal, digest, body, requested_ns, expires_ns, gateway)
		SELECT $1, $2, $3, $4, $5, $6, $7 WHERE (SELECT count(*) FROM rigout_approvals) < $8`,
		r.ID, r.Principal, r.Digest, r.Body, r.Requested.UnixNano(), r.Expires.UnixNano(), l.gateway, maxSharedApprovals)
	if err != nil {
		return fmt.Errorf("postgres: %s: put approval: %w", l.label, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: %s: put approval: %d approvals are stored already", l.label, maxSharedApprovals)
	}
	return nil
}

const approvalColumns = `id, principal, digest, body, requested_ns, expires_ns, decided, approved, approver, mac`

func scanApproval(row pgx.Row) (audit.ApprovalRecord, error) {
	var r audit.ApprovalRecord
	var req, exp int64
	err := row.Scan(&r.ID, &r.Principal, &r.Digest, &r.Body, &req, &exp, &r.Decided, &r.Approved, &r.Approver, &r.MAC)
	r.Requested, r.Expires = time.Unix(0, req), time.Unix(0, exp)
	return r, err
}

// PendingApprovals returns the undecided approvals unexpired at now,
// oldest first.
func (l *Ledger) PendingApprovals(ctx context.Context, now time.Time) ([]audit.ApprovalRecord, error) {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	rows, err := l.pool.Query(ctx, `SELECT `+approvalColumns+` FROM rigout_approvals
		WHERE NOT decided AND expires_ns > $1 ORDER BY requested_ns, id LIMIT $2`, now.UnixNano(), maxSharedApprovals)
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: pending approvals: %w", l.label, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (audit.ApprovalRecord, error) { return scanApproval(r) })
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: pending approvals: %w", l.label, err)
	}
	return out, nil
}

// Approval returns approval id as stored; found is false when there is
// none.
func (l *Ledger) Approval(ctx context.Context, id string) (audit.ApprovalRecord, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	r, err := scanApproval(l.pool.QueryRow(ctx, `SELECT `+approvalColumns+` FROM rigout_approvals WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return r, false, nil
	}
	if err != nil {
		return r, false, fmt.Errorf("postgres: %s: approval: %w", l.label, err)
	}
	return r, true, nil
}

// DecideApproval records approver's decision on id, once: only while id
// is undecided and unexpired at now, its digest is digest and its caller
// is not approver. It reports whether it did.
func (l *Ledger) DecideApproval(ctx context.Context, id, digest, approver string, approve bool, mac []byte, now time.Time) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	tag, err := l.pool.Exec(ctx, `UPDATE rigout_approvals SET decided = true, approved = $2, approver = $3, mac = $4
		WHERE id = $1 AND NOT decided AND expires_ns > $5 AND digest = $6 AND principal <> $3`,
		id, approve, approver, mac, now.UnixNano(), digest)
	if err != nil {
		return false, fmt.Errorf("postgres: %s: decide approval: %w", l.label, err)
	}
	return tag.RowsAffected() == 1, nil
}

// EndApproval deletes approval id and returns it as it was, decided or
// not: the waiting gateway's last look, after which no decision can be
// made. found is false when there is none.
func (l *Ledger) EndApproval(ctx context.Context, id string) (audit.ApprovalRecord, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	r, err := scanApproval(l.pool.QueryRow(ctx, `DELETE FROM rigout_approvals WHERE id = $1 RETURNING `+approvalColumns, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return r, false, nil
	}
	if err != nil {
		return r, false, fmt.Errorf("postgres: %s: end approval: %w", l.label, err)
	}
	return r, true, nil
}

// SpendNonce marks an elicitation question's nonce answered until
// expires, and reports false when it was already: the INSERT's primary
// key makes it once across gateways. Nonces that expired ten minutes
// before this one are deleted on the way.
func (l *Ledger) SpendNonce(ctx context.Context, nonce []byte, expires time.Time) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	if _, err := l.pool.Exec(ctx, `DELETE FROM rigout_spent_nonces WHERE expires_ns < $1`, expires.Add(-10*time.Minute).UnixNano()); err != nil {
		return false, fmt.Errorf("postgres: %s: spend nonce: %w", l.label, err)
	}
	tag, err := l.pool.Exec(ctx, `INSERT INTO rigout_spent_nonces (nonce, expires_ns) VALUES ($1, $2) ON CONFLICT (nonce) DO NOTHING`,
		nonce, expires.UnixNano())
	if err != nil {
		return false, fmt.Errorf("postgres: %s: spend nonce: %w", l.label, err)
	}
	return tag.RowsAffected() == 1, nil
}
