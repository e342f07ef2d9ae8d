-- Model routing: which provider and model answer each function of a tenant, and its history.

-- name: model_route_active
SELECT provider, model, tier, base_url
FROM model_routes
WHERE tenant_id = %(tenant_id)s AND function_name = %(function_name)s AND active;

-- name: model_route_details
-- One round trip for the routing page: the route history (newest first, active row first on
-- a tie) and the last ten runs that used this function.
SELECT
    COALESCE((
        SELECT jsonb_agg(jsonb_build_object(
                   'route_id', m.route_id, 'provider', m.provider, 'model', m.model,
                   'tier', m.tier, 'base_url', m.base_url, 'changed_by', m.changed_by,
                   'active', m.active, 'created_at', m.created_at)
               ORDER BY m.created_at DESC, m.active DESC)
        FROM model_routes m
        WHERE m.tenant_id = %(tenant_id)s AND m.function_name = %(function_name)s
    ), '[]'::jsonb) AS overrides,
    COALESCE((
        SELECT jsonb_agg(jsonb_build_object(
                   'run_id', r.run_id, 'trigger', r.trigger, 'status', r.status,
                   'provider', r.provider, 'model', r.model,
                   'prompt_tokens', r.prompt_tokens, 'completion_tokens', r.completion_tokens,
                   'total_tokens', r.prompt_tokens + r.completion_tokens,
                   'cost_usd', r.cost_usd, 'started_at', r.started_at,
                   'finished_at', r.finished_at)
               ORDER BY r.started_at DESC)
        FROM (SELECT * FROM agent_runs x
              WHERE x.tenant_id = %(tenant_id)s
                AND (x.trigger = %(trigger)s OR x.state ->> 'ai_function' = %(function_name)s)
              ORDER BY x.started_at DESC
              LIMIT 10) r
    ), '[]'::jsonb) AS recent_executions;

-- name: model_route_deactivate
UPDATE model_routes
SET active = false
WHERE tenant_id = %(tenant_id)s AND function_name = %(function_name)s AND active;

-- name: model_route_insert
INSERT INTO model_routes
    (tenant_id, function_name, provider, model, tier, base_url, changed_by)
VALUES (%(tenant_id)s, %(function_name)s, %(provider)s, %(model)s, %(tier)s, %(base_url)s,
        %(changed_by)s)
RETURNING route_id, function_name AS function, provider, model, tier, base_url, changed_by,
          active, created_at;
