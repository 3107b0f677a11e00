-- The graph and path stages of search walk no relation a search withholds (sql/450_deference.sql,
-- hidden_windows and hidden_entities): their traversal functions take what to leave out.
drop function if exists exo_private.related_entities(bigint, int, int);
drop function if exists exo_private.typed_neighbours(bigint, text, int);
