-- GET /tasks filters by door and model (issue 56): `params->>'door'` and `params->>'model'` over an owner's (or
-- every owner's) range of `tasks_owner_created_at_id_idx` / `tasks_created_at_id_idx`, read in the index's order
-- until a page is full. Without statistics PostgreSQL guesses each such expression matches 0.5 % of the rows, and
-- the two together 0.0025 %: it then reads every task of the owner through another index and sorts them, however
-- many match. Statistics on the two expressions (and on the pair: a model is served by few doors) let ANALYZE tell
-- it what they match. No index: a page stops at its limit, and an index per filter would cost every insert.
CREATE STATISTICS IF NOT EXISTS tasks_door_model_stats ON (params->>'door'), (params->>'model') FROM tasks;
