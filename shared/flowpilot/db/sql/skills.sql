-- Skills: the registry rows, sync and what one execution needs.

-- name: skill_get
SELECT skill_id, name, description, instructions, parameters, handler, category,
       side_effects, trust_level, mcp_exposed, groups, module, enabled, config, version_hash
FROM agent_skills
WHERE tenant_id = %(tenant_id)s AND name = %(name)s;

-- name: skill_sync
-- Upsert a pack's skills in one statement; an unchanged skill (same version hash) is not
-- rewritten and does not appear in the result.
INSERT INTO agent_skills AS s
    (tenant_id, name, description, instructions, parameters, handler, category, side_effects,
     trust_level, mcp_exposed, groups, module, enabled, pack, config, version_hash)
SELECT %(tenant_id)s, r.name, r.description, r.instructions, r.parameters, r.handler,
       r.category, r.side_effects, r.trust_level, r.mcp_exposed,
       ARRAY(SELECT jsonb_array_elements_text(r.groups)), r.module, r.enabled, %(pack)s,
       r.config, r.version_hash
FROM jsonb_to_recordset(%(skills)s) AS r(
    name text, description text, instructions text, parameters jsonb, handler text,
    category text, side_effects text, trust_level text, mcp_exposed boolean, groups jsonb,
    module text, enabled boolean, config jsonb, version_hash text)
ON CONFLICT (tenant_id, name) DO UPDATE SET
    description = EXCLUDED.description, instructions = EXCLUDED.instructions,
    parameters = EXCLUDED.parameters, handler = EXCLUDED.handler,
    category = EXCLUDED.category, side_effects = EXCLUDED.side_effects,
    trust_level = EXCLUDED.trust_level, mcp_exposed = EXCLUDED.mcp_exposed,
    groups = EXCLUDED.groups, module = EXCLUDED.module, enabled = EXCLUDED.enabled,
    pack = EXCLUDED.pack, config = EXCLUDED.config, version_hash = EXCLUDED.version_hash,
    updated_at = now()
WHERE s.version_hash IS DISTINCT FROM EXCLUDED.version_hash
RETURNING name, (xmax = 0) AS inserted;

-- name: skill_list
-- A skill of an optional module is usable only while the tenant has that module on;
-- 'core' skills always are.
SELECT s.name, s.description, s.handler, s.category, s.side_effects, s.trust_level,
       s.mcp_exposed, s.groups, s.module, s.enabled, s.pack, s.version_hash, s.updated_at,
       (s.module = 'core' OR COALESCE(m.enabled, false)) AS module_enabled
FROM agent_skills s
LEFT JOIN modules m ON m.tenant_id = s.tenant_id AND m.module = s.module
WHERE s.tenant_id = %(tenant_id)s
ORDER BY s.name;

-- name: skill_catalog
-- What the scorer and the planner need: every skill with its module state and recent wins.
SELECT s.name, s.description, s.parameters, s.side_effects, s.trust_level, s.enabled,
       s.category, s.version_hash,
       (s.module = 'core' OR COALESCE(m.enabled, false)) AS module_enabled,
       COALESCE(w.successes, 0) AS recent_successes
FROM agent_skills s
LEFT JOIN modules m ON m.tenant_id = s.tenant_id AND m.module = s.module
LEFT JOIN LATERAL (
    SELECT count(*)::integer AS successes FROM audit_log a
    WHERE a.tenant_id = s.tenant_id AND a.skill = s.name AND a.outcome = 'executed'
      AND a.created_at > now() - interval '30 days'
) w ON true
WHERE s.tenant_id = %(tenant_id)s
ORDER BY s.name;

-- name: skill_for_execution
-- One round trip: the skill, whether its module is on, the tenant's autonomy posture, the
-- trust policies that could apply, and the approval named by the request (if any).
SELECT s.name, s.handler, s.category, s.side_effects, s.trust_level, s.enabled,
       s.parameters, s.config, s.version_hash,
       (s.module = 'core' OR COALESCE(m.enabled, false)) AS module_enabled,
       t.autonomy,
       COALESCE((SELECT jsonb_agg(jsonb_build_object(
                    'skill', p.skill, 'category', p.category, 'actor_type', p.actor_type,
                    'trust_level', p.trust_level))
                 FROM trust_policies p
                 WHERE p.tenant_id = s.tenant_id
                   AND (p.skill = s.name OR p.category = s.category)),
                '[]'::jsonb) AS policies,
       (SELECT to_jsonb(a) FROM agent_approvals a
        WHERE a.tenant_id = s.tenant_id AND a.approval_id = %(approval_id)s) AS approval
FROM tenants t
LEFT JOIN agent_skills s ON s.tenant_id = t.tenant_id AND s.name = %(name)s
LEFT JOIN modules m ON m.tenant_id = t.tenant_id AND m.module = s.module
WHERE t.tenant_id = %(tenant_id)s;

-- name: trust_policy_set
INSERT INTO trust_policies (tenant_id, skill, category, actor_type, trust_level)
VALUES (%(tenant_id)s, %(skill)s, %(category)s, %(actor_type)s, %(trust_level)s)
RETURNING policy_id;

-- name: tenant_set_autonomy
UPDATE tenants SET autonomy = %(autonomy)s WHERE tenant_id = %(tenant_id)s
RETURNING autonomy;

-- name: skill_rows_for_lint
SELECT name, description, instructions, parameters, handler, config, side_effects,
       trust_level
FROM agent_skills
WHERE tenant_id = %(tenant_id)s
ORDER BY name;
