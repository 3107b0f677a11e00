-- Graph access: exo_graph, the role that runs a caller's Cypher, may only read the
-- workspace graphs, and only through their row security (exo_private.guard_graph_table).
-- After 980_ownership.sql, which hands the exo schemas' functions to exo_owner and exo_api.

-- The one function that runs a caller's Cypher runs as exo_graph, for exo.cypher alone.
alter function exo_private.run_cypher(name, text, int) owner to exo_graph;
revoke all on function exo_private.run_cypher(name, text, int) from public;
grant execute on function exo_private.run_cypher(name, text, int) to exo_api;

-- What AGE's cypher() reads of its catalog (exo_graph), and what exo.cypher looks up to
-- name the hidden graphids (exo_api); nothing else of ag_catalog's tables.
grant usage on schema ag_catalog to exo_graph, exo_api;
grant select on ag_catalog.ag_graph, ag_catalog.ag_label to exo_graph, exo_api;

-- Every vertex and edge table of every workspace graph (the parents included): USAGE on
-- the graph's schema, SELECT, and the row security policy. New graphs and labels get the
-- same from ensure_workspace_graph and ensure_label.
select exo_private.guard_graph_table(l.relation, l.kind)
from ag_catalog.ag_label l
join ag_catalog.ag_graph g on g.graphid = l.graph
join exo_private.workspaces w on exo_private.graph_name(w.name) = g.name
order by l.relation::text;
