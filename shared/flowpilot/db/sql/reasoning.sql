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
SET status = %(status)s, state = %(state)s, prompt_tokens = %(prompt_tokens)s,
    completion_tokens = %(completion_tokens)s, cost_usd = %(cost_usd)s,
    provider = %(provider)s, model = %(model)s, goal_frame = %(goal_frame)s,
    stop_reason = %(stop_reason)s, error = %(error)s, claimed_at = now(),
    finished_at = CASE WHEN %(status)s IN ('completed', 'failed', 'stopped') THEN now() END
WHERE tenant_id = %(tenant_id)s AND run_id = %(run_id)s
RETURNING (SELECT count(*) FROM new_steps) AS steps_written;

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
