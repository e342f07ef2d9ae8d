-- The reasoning engine: runs, their steps, and what a run perceives.

-- name: run_context
SELECT flowpilot_run_context(%(tenant_id)s, %(thread_id)s) AS context;

-- name: run_start
-- A run's first round trip: the run row is written first, and the same statement reads the
-- tenant's model route for this function and everything the run perceives.
WITH run AS (
    INSERT INTO agent_runs (tenant_id, trigger, status, thread_id, objective_id, state)
    VALUES (%(tenant_id)s, %(trigger)s, 'running', %(thread_id)s, %(objective_id)s, '{}')
    RETURNING run_id
)
SELECT (SELECT run_id FROM run) AS run_id,
       (SELECT to_jsonb(r) FROM (
            SELECT provider, model, tier, base_url FROM model_routes
            WHERE tenant_id = %(tenant_id)s AND function_name = %(function_name)s AND active
       ) r) AS route,
       flowpilot_run_context(%(tenant_id)s, %(thread_id)s) AS context;

-- name: run_checkpoint
-- The end of a turn of a run, in one statement: its journalled steps (numbered after the
-- run's last step), its status, counters and kept state, and its answer posted to its thread.
WITH new_steps AS (
    INSERT INTO agent_steps (tenant_id, run_id, seq, kind, skill, input, output, tokens,
                             duration_ms)
    SELECT %(tenant_id)s, %(run_id)s,
           COALESCE((SELECT max(seq) FROM agent_steps WHERE run_id = %(run_id)s), 0) + e.n,
           e.step ->> 'kind', e.step ->> 'skill', e.step -> 'input', e.step -> 'output',
           (e.step ->> 'tokens')::integer, (e.step ->> 'duration_ms')::integer
    FROM jsonb_array_elements(%(steps)s) WITH ORDINALITY AS e(step, n)
    RETURNING step_id
), spent AS (
    -- Tokens spent since the run's last statement, added to today's usage (the model's,
    -- not the offline reasoner's). Every part of this statement sees the run as it was.
    INSERT INTO tenant_usage AS u (tenant_id, day, tokens)
    SELECT %(tenant_id)s, current_date,
           %(prompt_tokens)s + %(completion_tokens)s - (r.prompt_tokens + r.completion_tokens)
    FROM agent_runs r
    WHERE r.tenant_id = %(tenant_id)s AND r.run_id = %(run_id)s
      AND %(provider)s::text IS DISTINCT FROM 'heuristic'
      AND %(prompt_tokens)s + %(completion_tokens)s > r.prompt_tokens + r.completion_tokens
    ON CONFLICT (tenant_id, day) DO UPDATE SET tokens = u.tokens + EXCLUDED.tokens
    RETURNING u.tokens
), reply AS (
    INSERT INTO thread_messages (tenant_id, thread_id, role, content, projection, run_id)
    SELECT %(tenant_id)s, t.thread_id, 'assistant', %(reply)s, %(projection)s::jsonb,
           %(run_id)s
    FROM threads t
    WHERE t.tenant_id = %(tenant_id)s AND t.thread_id = %(thread_id)s
      AND %(reply)s::text IS NOT NULL
    RETURNING thread_id
), touched AS (
    UPDATE threads SET updated_at = now()
    WHERE tenant_id = %(tenant_id)s AND thread_id = (SELECT thread_id FROM reply)
    RETURNING thread_id
)
UPDATE agent_runs
SET status = %(status)s, state = %(state)s, prompt_tokens = %(prompt_tokens)s,
    completion_tokens = %(completion_tokens)s, cost_usd = %(cost_usd)s,
    provider = %(provider)s, model = %(model)s, goal_frame = %(goal_frame)s,
    stop_reason = %(stop_reason)s, error = %(error)s, claimed_at = now(),
    finished_at = CASE WHEN %(status)s IN ('completed', 'failed', 'stopped') THEN now() END
WHERE tenant_id = %(tenant_id)s AND run_id = %(run_id)s
RETURNING (SELECT count(*) FROM new_steps) AS steps_written,
          (SELECT count(*) FROM touched) AS replies_posted;

-- name: run_claim_resume
-- A paused run resumes once: waiting_approval -> running with one conditional UPDATE.
UPDATE agent_runs SET status = 'running', claimed_at = now()
WHERE tenant_id = %(tenant_id)s AND run_id = %(run_id)s AND status = 'waiting_approval'
RETURNING run_id, trigger, thread_id, objective_id, state, goal_frame, prompt_tokens,
          completion_tokens, cost_usd, provider, model, started_at;

-- name: run_get
SELECT run_id, trigger, status, thread_id, objective_id, state, goal_frame, provider, model,
       prompt_tokens, completion_tokens, cost_usd, stop_reason, error, started_at, finished_at
FROM agent_runs
WHERE tenant_id = %(tenant_id)s AND run_id = %(run_id)s;
