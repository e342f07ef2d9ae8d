-- Signals: intake with an outbox row, the idempotent claim, the plan, compensation.

-- name: signal_insert
WITH s AS (
    -- A project must be the tenant's own (foreign keys alone would accept any tenant's).
    INSERT INTO signals (tenant_id, project_id, source, kind, title, body, payload)
    SELECT %(tenant_id)s, %(project_id)s, %(source)s, %(kind)s, %(title)s, %(body)s,
           %(payload)s
    WHERE %(project_id)s::uuid IS NULL
       OR EXISTS (SELECT 1 FROM projects p
                  WHERE p.tenant_id = %(tenant_id)s AND p.project_id = %(project_id)s)
    RETURNING signal_id, tenant_id, status, created_at
), o AS (
    INSERT INTO outbox (tenant_id, topic, payload)
    SELECT tenant_id, 'signal.plan',
           jsonb_build_object('signal_id', signal_id, 'tenant_id', tenant_id)
    FROM s
    RETURNING outbox_id
)
SELECT s.signal_id, s.status, s.created_at, o.outbox_id FROM s, o;

-- name: outbox_mark_published
UPDATE outbox SET published_at = now(), attempts = attempts + 1
WHERE outbox_id = ANY(%(ids)s) AND published_at IS NULL;

-- name: outbox_unpublished
-- System scope: rows a crash left unsent, oldest first (the relay republishes them).
SELECT outbox_id, tenant_id, topic, payload
FROM outbox
WHERE published_at IS NULL AND created_at < now() - make_interval(secs => %(min_age_s)s)
ORDER BY created_at
LIMIT %(limit)s;

-- name: signal_claim
-- pending -> running with one conditional UPDATE; a stale running claim may be retaken.
UPDATE signals
SET status = 'running', attempts = attempts + 1, claimed_at = now()
WHERE tenant_id = %(tenant_id)s AND signal_id = %(signal_id)s
  AND (status = 'pending'
       OR (status = 'running' AND claimed_at < now() - make_interval(secs => %(stale_s)s)))
RETURNING signal_id, project_id, kind, title, body, payload, attempts;

-- name: signal_context
SELECT
    (SELECT to_jsonb(p) - 'tenant_id' FROM projects p
     WHERE p.tenant_id = %(tenant_id)s AND p.project_id = %(project_id)s) AS project,
    COALESCE((SELECT jsonb_agg(jsonb_build_object(
                  'member_id', m.member_id, 'name', m.display_name, 'role', m.role,
                  'skill_tags', m.skill_tags, 'workload', m.workload)
                  ORDER BY m.workload, m.display_name)
              FROM project_members m
              WHERE m.tenant_id = %(tenant_id)s AND m.project_id = %(project_id)s),
             '[]'::jsonb) AS members,
    COALESCE((SELECT jsonb_agg(s.name ORDER BY s.name) FROM agent_skills s
              WHERE s.tenant_id = %(tenant_id)s AND s.enabled), '[]'::jsonb) AS skills;

-- name: signal_complete
UPDATE signals
SET status = 'completed', completed_at = now(),
    strategic_analysis = jsonb_set(strategic_analysis, '{ai_planner}', %(plan)s, true)
WHERE tenant_id = %(tenant_id)s AND signal_id = %(signal_id)s AND status = 'running'
RETURNING signal_id, status;

-- name: signal_fail
WITH f AS (
    UPDATE signals SET status = 'failed', completed_at = now()
    WHERE tenant_id = %(tenant_id)s AND signal_id = %(signal_id)s AND status = 'running'
    RETURNING signal_id
)
INSERT INTO outbox (tenant_id, topic, payload)
SELECT %(tenant_id)s, 'signal.compensate',
       jsonb_build_object('signal_id', signal_id, 'reason', %(reason)s::text)
FROM f
RETURNING outbox_id;

-- name: signal_get
SELECT signal_id, project_id, source, kind, title, body, payload, status,
       strategic_analysis, attempts, created_at, completed_at
FROM signals
WHERE tenant_id = %(tenant_id)s AND signal_id = %(signal_id)s;
