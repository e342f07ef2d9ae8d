-- Reflections: the critique after a write, and the lesson it leaves in memory.

-- name: reflection_insert
-- One statement: the reflection and, when there is a lesson, a lesson memory. No row comes
-- back when the named objective is not this tenant's. The run comes from the execution
-- context, so a run that is not (or no longer) recorded is simply left out.
WITH r AS (
    INSERT INTO agent_reflections (tenant_id, run_id, objective_id, skill, outcome, critique,
                                   lesson)
    SELECT %(tenant_id)s,
           (SELECT run_id FROM agent_runs
            WHERE tenant_id = %(tenant_id)s AND run_id = %(run_id)s::uuid),
           %(objective_id)s::uuid, %(skill)s, %(outcome)s, %(critique)s, %(lesson)s
    WHERE %(objective_id)s::uuid IS NULL
       OR EXISTS (SELECT 1 FROM agent_objectives
                  WHERE tenant_id = %(tenant_id)s AND objective_id = %(objective_id)s::uuid)
    RETURNING reflection_id, skill, outcome, objective_id, lesson
), m AS (
    INSERT INTO agent_memory (tenant_id, category, content, importance, metadata)
    SELECT %(tenant_id)s, 'lesson', r.lesson, 0.7,
           jsonb_build_object('reflection_id', r.reflection_id, 'skill', r.skill,
                              'outcome', r.outcome, 'objective_id', r.objective_id)
    FROM r
    WHERE r.lesson IS NOT NULL
    RETURNING memory_id
)
SELECT r.reflection_id::text AS reflection_id,
       (SELECT memory_id::text FROM m) AS lesson_memory_id
FROM r;
