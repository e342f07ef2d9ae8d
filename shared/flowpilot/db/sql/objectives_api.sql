-- Objectives as people manage them (API and CLI); creation and completion reuse the
-- objective_insert and objective_complete queries of objectives.sql.

-- name: objective_api_get
SELECT to_jsonb(o) - 'tenant_id' - 'locked_by_run' - 'locked_until' AS objective
FROM agent_objectives o
WHERE o.tenant_id = %(tenant_id)s AND o.objective_id = %(objective_id)s;

-- name: objective_api_list
-- Open objectives first (highest priority first), then paused, then the closed ones.
SELECT to_jsonb(o) - 'tenant_id' - 'locked_by_run' - 'locked_until' AS objective
FROM agent_objectives o
WHERE o.tenant_id = %(tenant_id)s
  AND (%(status)s::text IS NULL OR o.status = %(status)s::text)
ORDER BY CASE o.status WHEN 'open' THEN 0 WHEN 'paused' THEN 1 ELSE 2 END,
         o.priority DESC, o.created_at DESC
LIMIT %(limit)s;

-- name: objective_api_update
-- Fields left NULL keep their value; the caller holds the row (objective_lock) meanwhile.
WITH o AS (
    UPDATE agent_objectives
    SET goal = COALESCE(%(goal)s::text, goal),
        priority = COALESCE(%(priority)s::integer, priority),
        success_criteria = COALESCE(%(success_criteria)s::jsonb, success_criteria),
        kpis = COALESCE(%(kpis)s::jsonb, kpis),
        progress = COALESCE(%(progress)s::jsonb, progress),
        updated_at = now()
    WHERE tenant_id = %(tenant_id)s AND objective_id = %(objective_id)s
    RETURNING *
), e AS (
    INSERT INTO agent_events (tenant_id, kind, summary, payload)
    SELECT tenant_id, 'objective_updated', 'Objective changed: ' || left(goal, 200),
           jsonb_build_object('objective_id', objective_id, 'fields', %(fields)s::jsonb)
    FROM o
)
SELECT to_jsonb(o) - 'tenant_id' - 'locked_by_run' - 'locked_until' AS objective FROM o;
