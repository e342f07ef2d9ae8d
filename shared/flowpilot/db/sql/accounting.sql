-- Token accounting: what a tenant has spent today against its daily budget.

-- name: accounting_tokens_today
-- "Today" starts at midnight in the database's time zone, as the heartbeat's guard counts it.
SELECT t.daily_token_budget AS budget,
       COALESCE((SELECT sum(r.prompt_tokens + r.completion_tokens)
                 FROM agent_runs r
                 WHERE r.tenant_id = %(tenant_id)s
                   AND r.started_at >= date_trunc('day', now())
       AND r.provider IS DISTINCT FROM 'heuristic'), 0)::bigint AS used
FROM tenants t
WHERE t.tenant_id = %(tenant_id)s;
