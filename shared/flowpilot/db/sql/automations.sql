-- Automations: a skill run on a schedule (cron or rate) or in reaction to an event or signal.
-- Each occurrence is claimed by one conditional UPDATE, so concurrent heartbeats never run
-- the same occurrence twice.

-- name: automation_insert
INSERT INTO automations
    (tenant_id, name, trigger_kind, trigger_spec, skill, arguments, executor, next_run_at)
VALUES (%(tenant_id)s, %(name)s, %(trigger_kind)s, %(trigger_spec)s, %(skill)s,
        %(arguments)s, %(executor)s, %(next_run_at)s)
ON CONFLICT (tenant_id, name) DO NOTHING
RETURNING automation_id, name, trigger_kind, trigger_spec, skill, arguments, executor,
          enabled, next_run_at, last_run_at, last_outcome, created_at;

-- name: automation_list
SELECT automation_id, name, trigger_kind, trigger_spec, skill, arguments, executor,
       enabled, next_run_at, last_run_at, last_outcome, created_at
FROM automations
WHERE tenant_id = %(tenant_id)s
ORDER BY name;

-- name: automation_get
SELECT automation_id, name, trigger_kind, trigger_spec, skill, arguments, executor,
       enabled, next_run_at, last_run_at, last_outcome, created_at
FROM automations
WHERE tenant_id = %(tenant_id)s AND automation_id = %(automation_id)s;

-- name: automation_set_enabled
-- Switching a disabled automation back on starts it afresh: a schedule from its next time
-- (%(next_run_at)s, computed by the caller), a trigger from events that arrive from now on.
-- Column references on the right-hand side read the row as it was before this UPDATE.
UPDATE automations
SET enabled = %(enabled)s,
    next_run_at = CASE WHEN NOT enabled AND %(enabled)s THEN %(next_run_at)s::timestamptz
                       ELSE next_run_at END,
    last_run_at = CASE WHEN NOT enabled AND %(enabled)s AND trigger_kind <> 'cron' THEN now()
                       ELSE last_run_at END
WHERE tenant_id = %(tenant_id)s AND automation_id = %(automation_id)s
RETURNING automation_id, name, trigger_kind, trigger_spec, skill, arguments, executor,
          enabled, next_run_at, last_run_at, last_outcome, created_at;

-- name: automation_delete
DELETE FROM automations
WHERE tenant_id = %(tenant_id)s AND automation_id = %(automation_id)s
RETURNING automation_id;

-- name: automations_due
-- The tenant's enabled automations with an occurrence to run, and the database's clock
-- (%(now)s overrides it in tests). An automation never reacts to its own run events.
SELECT a.automation_id, a.name, a.trigger_kind, a.trigger_spec, a.skill, a.arguments,
       a.executor, a.next_run_at, a.last_run_at, a.created_at,
       c.now
FROM automations a
CROSS JOIN (SELECT COALESCE(%(now)s::timestamptz, now()) AS now) c
WHERE a.tenant_id = %(tenant_id)s AND a.enabled
  AND ((a.trigger_kind = 'cron' AND a.next_run_at <= c.now)
    OR (a.trigger_kind = 'event' AND EXISTS (
            SELECT 1 FROM agent_events e
            WHERE e.tenant_id = a.tenant_id AND e.kind = a.trigger_spec
              AND e.created_at > COALESCE(a.last_run_at, a.created_at)
              AND e.created_at <= c.now
              AND (e.payload ->> 'automation_id') IS DISTINCT FROM a.automation_id::text))
    OR (a.trigger_kind = 'signal' AND EXISTS (
            SELECT 1 FROM signals s
            WHERE s.tenant_id = a.tenant_id AND s.kind = a.trigger_spec
              AND s.created_at > COALESCE(a.last_run_at, a.created_at)
              AND s.created_at <= c.now)))
ORDER BY a.next_run_at NULLS LAST, a.created_at
LIMIT %(limit)s;

-- name: automation_claim_schedule
-- Claim one scheduled occurrence: only the caller that still sees it due moves it forward.
-- A concurrent claimer blocks on the row, then re-checks this WHERE against the new
-- next_run_at and claims nothing.
UPDATE automations
SET next_run_at = %(next_run_at)s, last_run_at = %(now)s
WHERE tenant_id = %(tenant_id)s AND automation_id = %(automation_id)s AND enabled
  AND next_run_at = %(occurrence)s AND next_run_at <= %(now)s
RETURNING automation_id;

-- name: automation_claim_trigger
-- Claim the matching events (or signals) that arrived since the last run, oldest first and
-- at most %(batch)s of them (rows sharing the last one's timestamp come along), by moving
-- last_run_at forward conditionally on the value the caller read. Returns the claimed
-- occurrences; none when another caller claimed them first.
WITH a AS (
    SELECT automation_id, trigger_kind, trigger_spec, COALESCE(last_run_at, created_at) AS since
    FROM automations
    WHERE tenant_id = %(tenant_id)s AND automation_id = %(automation_id)s AND enabled
      AND last_run_at IS NOT DISTINCT FROM %(last_run_at)s::timestamptz
), matched AS (
    SELECT 'event:' || e.event_id AS source, e.created_at
    FROM a JOIN agent_events e
      ON a.trigger_kind = 'event' AND e.tenant_id = %(tenant_id)s AND e.kind = a.trigger_spec
     AND e.created_at > a.since AND e.created_at <= %(now)s
     AND (e.payload ->> 'automation_id') IS DISTINCT FROM a.automation_id::text
    UNION ALL
    SELECT 'signal:' || s.signal_id, s.created_at
    FROM a JOIN signals s
      ON a.trigger_kind = 'signal' AND s.tenant_id = %(tenant_id)s AND s.kind = a.trigger_spec
     AND s.created_at > a.since AND s.created_at <= %(now)s
), horizon AS (
    SELECT CASE WHEN count(*) > %(batch)s
                THEN (SELECT m.created_at FROM matched m ORDER BY m.created_at
                      OFFSET %(batch)s - 1 LIMIT 1)
                ELSE %(now)s::timestamptz END AS upto
    FROM matched
    HAVING count(*) > 0
), claimed AS (
    UPDATE automations u
    SET last_run_at = h.upto
    FROM horizon h
    WHERE u.tenant_id = %(tenant_id)s AND u.automation_id = %(automation_id)s AND u.enabled
      AND u.last_run_at IS NOT DISTINCT FROM %(last_run_at)s::timestamptz
    RETURNING u.last_run_at AS upto
)
SELECT m.source, m.created_at
FROM matched m JOIN claimed c ON m.created_at <= c.upto
ORDER BY m.created_at, m.source;

-- name: automation_record_run
-- One round trip: the automation's last outcome and an episodic event saying what happened.
WITH a AS (
    UPDATE automations SET last_outcome = %(outcome)s
    WHERE tenant_id = %(tenant_id)s AND automation_id = %(automation_id)s
    RETURNING automation_id
)
INSERT INTO agent_events (tenant_id, kind, summary, payload, run_id)
VALUES (%(tenant_id)s, 'automation_run', %(summary)s, %(payload)s, %(run_id)s::uuid)
RETURNING event_id;
