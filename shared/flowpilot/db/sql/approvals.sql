-- Approvals: created by the trust gate, decided by a person, followed through once.

-- name: approval_create
INSERT INTO agent_approvals
    (tenant_id, skill, arguments, arguments_hash, requested_by, run_id, reason, expires_at)
VALUES (%(tenant_id)s, %(skill)s, %(arguments)s, %(arguments_hash)s, %(requested_by)s,
        %(run_id)s, %(reason)s, now() + make_interval(hours => %(ttl_hours)s))
RETURNING approval_id, expires_at;

-- name: approval_list
SELECT approval_id, skill, arguments, requested_by, run_id, reason, status, decided_by,
       decided_at, expires_at, created_at, result
FROM agent_approvals
WHERE tenant_id = %(tenant_id)s
  AND (%(status)s::text IS NULL OR status = %(status)s)
ORDER BY created_at DESC
LIMIT %(limit)s;

-- name: approval_get
SELECT approval_id, skill, arguments, arguments_hash, requested_by, run_id, reason, status,
       decided_by, decided_at, expires_at, created_at, result
FROM agent_approvals
WHERE tenant_id = %(tenant_id)s AND approval_id = %(approval_id)s;

-- name: approval_decide
-- A decision only lands on a pending, unexpired approval.
UPDATE agent_approvals
SET status = %(decision)s, decided_by = %(decided_by)s, decided_at = now()
WHERE tenant_id = %(tenant_id)s AND approval_id = %(approval_id)s
  AND status = 'pending' AND expires_at > now()
RETURNING approval_id, skill, arguments, status, run_id, requested_by;

-- name: approval_claim
-- Follow-through claims the approval once: only the one caller whose UPDATE matches runs it.
UPDATE agent_approvals
SET status = 'executing', claimed_at = now()
WHERE tenant_id = %(tenant_id)s AND approval_id = %(approval_id)s
  AND status = 'approved' AND expires_at > now()
  AND skill = %(skill)s AND arguments_hash = %(arguments_hash)s
RETURNING approval_id;

-- name: approval_finish
UPDATE agent_approvals
SET status = %(status)s, result = %(result)s
WHERE tenant_id = %(tenant_id)s AND approval_id = %(approval_id)s AND status = 'executing';

-- name: approvals_expire
-- Pending approvals past their expiry become expired (run by the heartbeat and on read).
UPDATE agent_approvals SET status = 'expired'
WHERE tenant_id = %(tenant_id)s AND status = 'pending' AND expires_at <= now()
RETURNING approval_id;

-- name: approval_fail
-- An approved operation that can no longer run (its skill is gone, blocked or its arguments
-- no longer fit) is used up as failed, so no follow-through retries it.
UPDATE agent_approvals SET status = 'failed', result = %(result)s
WHERE tenant_id = %(tenant_id)s AND approval_id = %(approval_id)s AND status = 'approved';
