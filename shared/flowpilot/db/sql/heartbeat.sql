-- The heartbeat: due tenants, the tick's lease, pending work, the tick log.

-- name: heartbeat_due_tenants
-- System scope: every tenant with the FlowPilot module on and something to do.
SELECT t.tenant_id
FROM tenants t
JOIN modules m ON m.tenant_id = t.tenant_id AND m.module = 'flowpilot' AND m.enabled
WHERE EXISTS (SELECT 1 FROM agent_objectives o
              WHERE o.tenant_id = t.tenant_id AND o.status = 'open')
   OR EXISTS (SELECT 1 FROM automations a
              WHERE a.tenant_id = t.tenant_id AND a.enabled AND a.next_run_at <= now())
   OR EXISTS (SELECT 1 FROM agent_approvals p
              WHERE p.tenant_id = t.tenant_id
                AND (p.status = 'approved' OR (p.status = 'pending' AND p.expires_at <= now())))
   OR EXISTS (SELECT 1 FROM outbox x
              WHERE x.tenant_id = t.tenant_id AND x.published_at IS NULL)
ORDER BY t.tenant_id
LIMIT %(limit)s;

-- name: heartbeat_begin
-- One round trip: claim the tenant's heartbeat lease, read the guards and the pending work.
SELECT * FROM flowpilot_heartbeat_begin(%(tenant)s, %(holder)s, %(ttl_seconds)s);

-- name: heartbeat_finish
-- One round trip: log the tick and release the lease (only if still ours).
WITH tick AS (
    INSERT INTO heartbeat_ticks
        (tenant_id, outcome, objective_id, skill, model_calls, tokens, duration_ms, reason)
    VALUES (%(tenant)s, %(outcome)s, %(objective_id)s, %(skill)s, %(model_calls)s,
            %(tokens)s, %(duration_ms)s, %(reason)s)
    RETURNING tick_id
)
UPDATE leases SET holder = NULL, expires_at = '-infinity'
WHERE tenant_id = %(tenant)s AND name = 'heartbeat' AND holder = %(holder)s
RETURNING (SELECT tick_id FROM tick) AS tick_id;
