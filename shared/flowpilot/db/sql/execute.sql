-- Execution records: the audit row, the run's step, the notification card, in one statement.

-- name: execution_record
-- The audit row and, for a notify skill that ran, its notification card. (The run's own
-- journal, agent_steps, is the engine's: it records the act step with its next checkpoint.)
WITH audit AS (
    INSERT INTO audit_log (tenant_id, actor_type, actor_id, action, skill, arguments_hash,
                           effective_trust, outcome, duration_ms, error, run_id)
    VALUES (%(tenant_id)s, %(actor_type)s, %(actor_id)s, 'execute', %(skill)s,
            %(arguments_hash)s, %(trust)s, %(outcome)s, %(duration_ms)s, %(error)s, %(run_id)s)
    RETURNING audit_id
), card AS (
    INSERT INTO notifications (tenant_id, kind, title, body)
    SELECT %(tenant_id)s, 'skill_executed', %(notify_title)s, %(notify_body)s::jsonb
    WHERE %(notify_title)s::text IS NOT NULL
    RETURNING notification_id
)
SELECT (SELECT audit_id FROM audit) AS audit_id,
       (SELECT notification_id FROM card) AS notification_id;

-- name: idempotency_get
SELECT idempotency_key, status, expiry_timestamp, in_progress_expiry_timestamp,
       response_data, payload_hash
FROM idempotency_records
WHERE tenant_id = %(tenant_id)s AND idempotency_key = %(key)s;

-- name: idempotency_put
-- Insert, or take over a record that expired (or whose in-progress claim expired).
INSERT INTO idempotency_records AS r
    (tenant_id, idempotency_key, status, expiry_timestamp, in_progress_expiry_timestamp,
     response_data, payload_hash)
VALUES (%(tenant_id)s, %(key)s, %(status)s, %(expiry)s, %(in_progress_expiry)s, NULL,
        %(payload_hash)s)
ON CONFLICT (tenant_id, idempotency_key) DO UPDATE SET
    status = EXCLUDED.status, expiry_timestamp = EXCLUDED.expiry_timestamp,
    in_progress_expiry_timestamp = EXCLUDED.in_progress_expiry_timestamp,
    response_data = NULL, payload_hash = EXCLUDED.payload_hash, created_at = now()
WHERE r.expiry_timestamp < %(now_s)s
   OR (r.status = 'INPROGRESS' AND r.in_progress_expiry_timestamp < %(now_ms)s)
RETURNING idempotency_key;

-- name: idempotency_update
UPDATE idempotency_records
SET status = %(status)s, expiry_timestamp = %(expiry)s, response_data = %(response_data)s,
    payload_hash = %(payload_hash)s
WHERE tenant_id = %(tenant_id)s AND idempotency_key = %(key)s;

-- name: idempotency_delete
DELETE FROM idempotency_records
WHERE tenant_id = %(tenant_id)s AND idempotency_key = %(key)s;
