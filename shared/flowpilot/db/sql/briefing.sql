-- The briefing: what a business owner (or the agent waking up) needs to know, in one trip.

-- name: briefing_snapshot
SELECT jsonb_build_object(
    'approvals', jsonb_build_object(
        'pending', (SELECT count(*) FROM agent_approvals a
                    WHERE a.tenant_id = %(tenant_id)s AND a.status = 'pending'
                      AND a.expires_at > now()),
        'top', COALESCE((
            SELECT jsonb_agg(jsonb_build_object(
                       'approval_id', a.approval_id, 'skill', a.skill, 'reason', a.reason,
                       'created_at', a.created_at, 'expires_at', a.expires_at)
                   ORDER BY a.expires_at, a.created_at)
            FROM (SELECT * FROM agent_approvals a
                  WHERE a.tenant_id = %(tenant_id)s AND a.status = 'pending'
                    AND a.expires_at > now()
                  ORDER BY a.expires_at, a.created_at
                  LIMIT 5) a), '[]'::jsonb)),
    'objectives', COALESCE((
        SELECT jsonb_agg(jsonb_build_object(
                   'objective_id', o.objective_id, 'goal', o.goal, 'priority', o.priority,
                   'steps_done', (SELECT count(*) FROM jsonb_array_elements(
                                      o.progress -> 'plan') s
                                  WHERE s ->> 'status' IN ('done', 'skipped')),
                   'steps_total', jsonb_array_length(COALESCE(o.progress -> 'plan', '[]')),
                   'next_step', o.progress -> 'plan'
                                -> COALESCE((o.progress ->> 'cursor')::int, 0) ->> 'step',
                   'kpis', o.kpis, 'updated_at', o.updated_at)
               ORDER BY o.priority DESC, o.created_at)
        FROM (SELECT * FROM agent_objectives o
              WHERE o.tenant_id = %(tenant_id)s AND o.status = 'open'
              ORDER BY o.priority DESC, o.created_at
              LIMIT 10) o), '[]'::jsonb),
    'recent_events', COALESCE((
        SELECT jsonb_agg(jsonb_build_object(
                   'kind', e.kind, 'summary', e.summary, 'created_at', e.created_at)
               ORDER BY e.created_at DESC, e.event_id DESC)
        FROM (SELECT * FROM agent_events e
              WHERE e.tenant_id = %(tenant_id)s
              ORDER BY e.created_at DESC, e.event_id DESC
              LIMIT 10) e), '[]'::jsonb),
    'failures', jsonb_build_object(
        'count', (SELECT count(*) FROM audit_log l
                  WHERE l.tenant_id = %(tenant_id)s AND l.outcome IN ('failed', 'refused')
                    AND l.created_at > now() - interval '24 hours'),
        'recent', COALESCE((
            SELECT jsonb_agg(jsonb_build_object(
                       'skill', l.skill, 'outcome', l.outcome, 'action', l.action,
                       'error', l.error ->> 'message', 'created_at', l.created_at)
                   ORDER BY l.created_at DESC, l.audit_id DESC)
            FROM (SELECT * FROM audit_log l
                  WHERE l.tenant_id = %(tenant_id)s AND l.outcome IN ('failed', 'refused')
                    AND l.created_at > now() - interval '24 hours'
                  ORDER BY l.created_at DESC, l.audit_id DESC
                  LIMIT 5) l), '[]'::jsonb)),
    'signals_waiting', (SELECT count(*) FROM signals s
                        WHERE s.tenant_id = %(tenant_id)s
                          AND s.status IN ('pending', 'running')),
    'tokens', jsonb_build_object(
        'today', (SELECT COALESCE(sum(r.prompt_tokens + r.completion_tokens), 0)
                  FROM agent_runs r
                  WHERE r.tenant_id = %(tenant_id)s
                    AND r.started_at >= date_trunc('day', now())
       AND r.provider IS DISTINCT FROM 'heuristic'),
        'budget', (SELECT t.daily_token_budget FROM tenants t
                   WHERE t.tenant_id = %(tenant_id)s)),
    'flagged_skills', COALESCE((
        SELECT jsonb_agg(jsonb_build_object(
                   'skill', f.skill, 'bad_outcomes', f.bad, 'last_critique', f.last_critique)
               ORDER BY f.bad DESC, f.skill)
        FROM (SELECT x.skill, count(*) AS bad,
                     (array_agg(x.critique ORDER BY x.created_at DESC))[1] AS last_critique
              FROM agent_reflections x
              WHERE x.tenant_id = %(tenant_id)s AND x.skill IS NOT NULL
                AND x.outcome IN ('negative', 'no_effect')
                AND x.created_at > now() - interval '7 days'
              GROUP BY x.skill
              HAVING count(*) >= 2) f), '[]'::jsonb),
    'generated_at', now()
) AS briefing;
