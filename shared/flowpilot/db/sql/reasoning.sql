-- The reasoning engine: runs, their steps, and what a run perceives.

-- name: run_create
INSERT INTO agent_runs (tenant_id, trigger, status, thread_id, objective_id, provider, model, state)
VALUES (%(tenant_id)s, %(trigger)s, 'running', %(thread_id)s, %(objective_id)s, %(provider)s,
        %(model)s, %(state)s)
RETURNING run_id, started_at;

-- name: run_context
-- Everything a run perceives, in one round trip: soul and constraints, objectives, recent
-- events, working notes and lessons, the thread's recent messages, today's token spend and
-- a fingerprint of the skill catalog (so a cached skill index can be reused).
SELECT
    (SELECT jsonb_agg(jsonb_build_object('category', m.category, 'key', m.key,
                                         'content', m.content)
                      ORDER BY m.category, m.key)
     FROM agent_memory m
     WHERE m.tenant_id = %(tenant_id)s AND m.category IN ('soul', 'identity', 'constraints')
       AND (m.expires_at IS NULL OR m.expires_at > now())) AS soul,
    (SELECT jsonb_agg(o ORDER BY o.priority DESC, o.created_at)
     FROM (SELECT objective_id::text AS ref, goal, priority, progress, kpis, success_criteria,
                  created_at
           FROM agent_objectives
           WHERE tenant_id = %(tenant_id)s AND status = 'open'
           ORDER BY priority DESC, created_at LIMIT 5) o) AS objectives,
    (SELECT jsonb_agg(e ORDER BY e.created_at DESC)
     FROM (SELECT kind, summary, created_at FROM agent_events
           WHERE tenant_id = %(tenant_id)s ORDER BY created_at DESC LIMIT 5) e) AS events,
    (SELECT jsonb_agg(n ORDER BY n.created_at DESC)
     FROM (SELECT category, content, created_at FROM agent_memory
           WHERE tenant_id = %(tenant_id)s AND category IN ('working', 'lesson')
             AND (expires_at IS NULL OR expires_at > now())
           ORDER BY created_at DESC LIMIT 6) n) AS notes,
    (SELECT jsonb_agg(h ORDER BY h.created_at)
     FROM (SELECT role, content, created_at FROM thread_messages
           WHERE tenant_id = %(tenant_id)s AND thread_id = %(thread_id)s
           ORDER BY created_at DESC LIMIT 9) h) AS history,
    (SELECT COALESCE(sum(r.prompt_tokens + r.completion_tokens), 0)::bigint
     FROM agent_runs r
     WHERE r.tenant_id = %(tenant_id)s AND r.started_at >= date_trunc('day', now())
       AND r.provider IS DISTINCT FROM 'heuristic')
        AS tokens_today,
    (SELECT daily_token_budget FROM tenants WHERE tenant_id = %(tenant_id)s) AS daily_budget,
    (SELECT md5(string_agg(s.name || s.version_hash || s.enabled::text
                           || (s.module = 'core' OR COALESCE(mo.enabled, false))::text, ',' ORDER BY s.name))
     FROM agent_skills s
     LEFT JOIN modules mo ON mo.tenant_id = s.tenant_id AND mo.module = s.module
     WHERE s.tenant_id = %(tenant_id)s) AS catalog_version;

-- name: run_checkpoint
-- Record pending steps (numbered after the run's last step) and the run's progress.
WITH new_steps AS (
    INSERT INTO agent_steps (tenant_id, run_id, seq, kind, skill, input, output, tokens,
                             duration_ms)
    SELECT %(tenant_id)s, %(run_id)s,
           COALESCE((SELECT max(seq) FROM agent_steps WHERE run_id = %(run_id)s), 0) + e.n,
           e.step ->> 'kind', e.step ->> 'skill', e.step -> 'input', e.step -> 'output',
           (e.step ->> 'tokens')::integer, (e.step ->> 'duration_ms')::integer
    FROM jsonb_array_elements(%(steps)s) WITH ORDINALITY AS e(step, n)
    RETURNING step_id
)
UPDATE agent_runs
SET status = %(status)s, state = COALESCE(%(state)s, state), prompt_tokens = %(prompt_tokens)s,
    completion_tokens = %(completion_tokens)s, cost_usd = %(cost_usd)s,
    provider = %(provider)s, model = %(model)s, goal_frame = %(goal_frame)s,
    stop_reason = %(stop_reason)s, error = %(error)s,
    finished_at = CASE WHEN %(status)s IN ('completed', 'failed', 'stopped') THEN now() END
WHERE tenant_id = %(tenant_id)s AND run_id = %(run_id)s
RETURNING (SELECT count(*) FROM new_steps) AS steps_written;

-- name: run_claim_resume
-- A paused run resumes once: waiting_approval -> running with one conditional UPDATE.
UPDATE agent_runs SET status = 'running'
WHERE tenant_id = %(tenant_id)s AND run_id = %(run_id)s AND status = 'waiting_approval'
RETURNING run_id, trigger, thread_id, objective_id, state, goal_frame, prompt_tokens,
          completion_tokens, cost_usd, provider, model, started_at;

-- name: run_get
SELECT run_id, trigger, status, thread_id, objective_id, state, goal_frame, provider, model,
       prompt_tokens, completion_tokens, cost_usd, stop_reason, error, started_at, finished_at
FROM agent_runs
WHERE tenant_id = %(tenant_id)s AND run_id = %(run_id)s;

-- name: run_steps
SELECT seq, kind, skill, input, output, tokens, duration_ms, created_at
FROM agent_steps
WHERE tenant_id = %(tenant_id)s AND run_id = %(run_id)s
ORDER BY seq;
