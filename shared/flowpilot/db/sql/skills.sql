-- Skills: the registry rows.

-- name: skill_get
SELECT skill_id, name, description, instructions, parameters, handler, category,
       side_effects, trust_level, mcp_exposed, groups, module, enabled, version_hash
FROM agent_skills
WHERE tenant_id = %(tenant_id)s AND name = %(name)s;
