-- The heartbeat: due tenants, the tick's lease, objectives, pre-passes, the tick log.

-- name: heartbeat_due_tenants
-- System scope: tenants with the FlowPilot module on and something to do, and any tenant
-- with due automations (with the module off they still run, on the platform executor).
SELECT t.tenant_id
FROM tenants t
LEFT JOIN modules m ON m.tenant_id = t.tenant_id AND m.module = 'flowpilot'
WHERE (COALESCE(m.enabled, false) AND (
        EXISTS (SELECT 1 FROM agent_objectives o
                WHERE o.tenant_id = t.tenant_id AND o.status = 'open')
     OR EXISTS (SELECT 1 FROM agent_approvals p
                WHERE p.tenant_id = t.tenant_id
                  AND (p.status = 'approved' OR (p.status = 'pending' AND p.expires_at <= now())))
     OR EXISTS (SELECT 1 FROM agent_runs r
                WHERE r.tenant_id = t.tenant_id AND r.status = 'waiting_approval')
     OR EXISTS (SELECT 1 FROM outbox x
                WHERE x.tenant_id = t.tenant_id AND x.published_at IS NULL)))
   OR flowpilot_due_automations(t.tenant_id) > 0
ORDER BY t.tenant_id
LIMIT %(limit)s;

-- name: heartbeat_begin
-- One round trip: claim the tenant's heartbeat lease, read the guards and the pending work.
SELECT * FROM flowpilot_heartbeat_begin(%(tenant)s, %(holder)s, %(ttl_seconds)s);

-- name: heartbeat_objective_claim
-- The highest-priority open objective that no other tick holds and no paused run waits on,
-- locked for this tick with one conditional UPDATE.
UPDATE agent_objectives o
SET locked_by_run = %(lock)s, locked_until = now() + make_interval(secs => %(ttl_seconds)s)
WHERE o.objective_id = (
    SELECT c.objective_id FROM agent_objectives c
    WHERE c.tenant_id = %(tenant_id)s AND c.status = 'open'
      AND (c.locked_until IS NULL OR c.locked_until < now())
      AND NOT EXISTS (SELECT 1 FROM agent_runs r
                      WHERE r.tenant_id = c.tenant_id AND r.objective_id = c.objective_id
                        AND r.status = 'waiting_approval')
    ORDER BY c.priority DESC, c.updated_at
    LIMIT 1
    FOR UPDATE SKIP LOCKED
)
RETURNING o.objective_id, o.goal, o.priority, o.success_criteria, o.kpis, o.progress;

-- name: heartbeat_approved_operations
-- Approved but not yet followed through (a crash, or a decision recorded elsewhere).
SELECT approval_id, skill, arguments, requested_by, run_id
FROM agent_approvals
WHERE tenant_id = %(tenant_id)s AND status = 'approved' AND expires_at > now()
ORDER BY decided_at
LIMIT 5;

-- name: heartbeat_resumable_runs
SELECT r.run_id, r.objective_id, a.status AS approval_status, a.result
FROM agent_runs r
JOIN agent_approvals a ON a.tenant_id = r.tenant_id AND a.run_id = r.run_id
WHERE r.tenant_id = %(tenant_id)s AND r.status = 'waiting_approval'
  AND a.status IN ('executed', 'failed', 'rejected', 'expired')
ORDER BY r.started_at
LIMIT 5;

-- name: heartbeat_fail_interrupted_runs
-- Runs with no sign of life for 15 minutes (a crash) will never finish: say so and free
-- their objectives.
WITH failed AS (
    UPDATE agent_runs SET status = 'failed', stop_reason = 'interrupted', finished_at = now()
    WHERE tenant_id = %(tenant_id)s AND status = 'running'
      AND claimed_at < now() - interval '15 minutes'
    RETURNING run_id, objective_id
), freed AS (
    UPDATE agent_objectives o SET locked_by_run = NULL, locked_until = NULL
    FROM failed f
    WHERE o.tenant_id = %(tenant_id)s AND o.objective_id = f.objective_id
    RETURNING o.objective_id
)
SELECT run_id FROM failed;

-- name: heartbeat_unstick_approvals
-- An approval left 'executing' for 15 minutes was interrupted mid follow-through. It is not
-- run again (at most once); it fails with a clear result, and its paused run can resume.
UPDATE agent_approvals
SET status = 'failed',
    result = jsonb_build_object('status', 'failed', 'result', NULL, 'approval_id', approval_id,
        'trust_level', 'approve', 'error', jsonb_build_object('code', 'interrupted',
        'message', 'the approved operation was interrupted; check before trying again'))
WHERE tenant_id = %(tenant_id)s AND status = 'executing'
  AND claimed_at < now() - interval '15 minutes'
RETURNING approval_id;

-- name: heartbeat_finish
-- One round trip at the end of every claimed tick: the reflection and the objective's
-- progress (flowpilot_record_reflection), the tick log, and the lease released.
WITH reflected AS (
    SELECT flowpilot_record_reflection(
        %(tenant)s, %(run_id)s, %(objective_id)s, %(skill)s, %(outcome_reflection)s,
        %(critique)s, %(lesson)s, %(lesson_key)s, %(progress)s, %(kpis)s,
        %(objective_status)s) AS reflection_id
), tick AS (
    INSERT INTO heartbeat_ticks
        (tenant_id, outcome, objective_id, skill, model_calls, tokens, duration_ms, reason)
    VALUES (%(tenant)s, %(outcome)s, %(objective_id)s, %(skill)s, %(model_calls)s,
            %(tokens)s, %(duration_ms)s, %(reason)s)
    RETURNING tick_id
), released AS (
    UPDATE leases SET holder = NULL, expires_at = '-infinity'
    WHERE tenant_id = %(tenant)s AND name = 'heartbeat' AND holder = %(holder)s
    RETURNING tenant_id
)
SELECT (SELECT tick_id FROM tick) AS tick_id,
       (SELECT reflection_id FROM reflected) AS reflection_id,
       (SELECT count(*) FROM released) AS released;

-- name: reflection_apply
-- A reflection outside a tick's finish (after a pre-pass follow-through).
SELECT flowpilot_record_reflection(
    %(tenant_id)s, %(run_id)s, %(objective_id)s, %(skill)s, %(outcome)s, %(critique)s,
    %(lesson)s, %(lesson_key)s, %(progress)s, %(kpis)s, %(objective_status)s) AS reflection_id;

-- name: heartbeat_objective_get
SELECT objective_id, goal, priority, success_criteria, kpis, progress, status
FROM agent_objectives
WHERE tenant_id = %(tenant_id)s AND objective_id = %(objective_id)s;
