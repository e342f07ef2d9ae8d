-- Objectives: ranked goals with a plan, a cursor and KPIs. Each change leaves an event.
-- Objectives come back as one JSON document (ids and timestamps already text).

-- name: objective_insert
WITH o AS (
    INSERT INTO agent_objectives (tenant_id, goal, priority, success_criteria, kpis, progress)
    VALUES (%(tenant_id)s, %(goal)s, %(priority)s, %(success_criteria)s, %(kpis)s,
            %(progress)s)
    RETURNING *
), e AS (
    INSERT INTO agent_events (tenant_id, kind, summary, payload, run_id)
    SELECT tenant_id, 'objective_created', 'New objective: ' || left(goal, 200),
           jsonb_build_object('objective_id', objective_id, 'priority', priority),
           %(run_id)s::uuid
    FROM o
)
SELECT to_jsonb(o) - 'tenant_id' - 'locked_by_run' - 'locked_until' AS objective FROM o;

-- name: objective_lock
-- Read an objective to change its progress; the row stays locked until the transaction ends.
SELECT objective_id, status, goal, kpis, progress
FROM agent_objectives
WHERE tenant_id = %(tenant_id)s AND objective_id = %(objective_id)s
FOR UPDATE;

-- name: objective_save_progress
WITH o AS (
    UPDATE agent_objectives
    SET progress = %(progress)s, kpis = %(kpis)s, updated_at = now()
    WHERE tenant_id = %(tenant_id)s AND objective_id = %(objective_id)s
    RETURNING *
), e AS (
    INSERT INTO agent_events (tenant_id, kind, summary, payload, run_id)
    SELECT tenant_id, 'objective_progress', %(summary)s,
           jsonb_build_object('objective_id', objective_id) || %(details)s, %(run_id)s::uuid
    FROM o
)
SELECT to_jsonb(o) - 'tenant_id' - 'locked_by_run' - 'locked_until' AS objective FROM o;

-- name: objective_transition
-- Moves an objective from one of %(from_statuses)s to %(to_status)s (complete, pause,
-- resume), with an event; completing may add a summary to its progress. An objective in any
-- other status comes back unchanged (changed = false), so the caller can tell "already
-- there" from "not allowed"; no row means not found.
WITH c AS (
    UPDATE agent_objectives
    SET status = %(to_status)s::text, updated_at = now(),
        completed_at = CASE WHEN %(to_status)s::text = 'completed' THEN now()
                            ELSE completed_at END,
        progress = CASE WHEN %(summary)s::text IS NULL THEN progress
                        ELSE jsonb_set(progress, '{summary}', to_jsonb(%(summary)s::text))
                   END
    WHERE tenant_id = %(tenant_id)s AND objective_id = %(objective_id)s
      AND status = ANY(%(from_statuses)s::text[])
    RETURNING *
), e AS (
    INSERT INTO agent_events (tenant_id, kind, summary, payload, run_id)
    SELECT tenant_id,
           CASE %(to_status)s::text WHEN 'open' THEN 'objective_resumed'
                ELSE 'objective_' || %(to_status)s::text END,
           'Objective ' || CASE %(to_status)s::text WHEN 'open' THEN 'resumed'
                                ELSE %(to_status)s::text END || ': ' || left(goal, 200),
           jsonb_build_object('objective_id', objective_id, 'summary', %(summary)s::text),
           %(run_id)s::uuid
    FROM c
)
SELECT to_jsonb(c) - 'tenant_id' - 'locked_by_run' - 'locked_until' AS objective,
       true AS changed
FROM c
UNION ALL
SELECT to_jsonb(o) - 'tenant_id' - 'locked_by_run' - 'locked_until', false
FROM agent_objectives o
WHERE o.tenant_id = %(tenant_id)s AND o.objective_id = %(objective_id)s
  AND NOT EXISTS (SELECT 1 FROM c);
