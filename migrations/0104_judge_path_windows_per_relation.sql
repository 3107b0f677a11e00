-- The path stage judges withheld windows per relation it reads (issue 32), as the graph stage
-- does since 0103: exo_private.typed_neighbours takes the released keys instead of a list of
-- hidden windows (exo_private.window_charges, sql/450_deference.sql), and nothing lists every
-- window overlapping a withheld chunk any more (122 ms a search in a workspace of 7,500 charged
-- chunks at a million chunks, and a generic plan comparing each relation with thousands of them).
drop function if exists exo_private.typed_neighbours(bigint, text, int, bigint[], bigint[]);
drop function if exists exo_private.hidden_windows(text, text[]);

-- typed_neighbours reads, of each matching predicate of an entity, its relations in (neighbour,
-- relation id) order up to its limit: with the id in the index the scan stops there; without it,
-- every relation to the first neighbour was read to be sorted (at a million chunks the owner is
-- the subject of 13,837 IS_A_MEMBER_OF relations to one club, each then judged by window).
drop index exo_private.relations_subject_predicate_idx;
drop index exo_private.relations_object_predicate_idx;
create index relations_subject_predicate_idx on exo_private.relations (subject_id, predicate, object_id, id);
create index relations_object_predicate_idx on exo_private.relations (object_id, predicate, subject_id, id);

-- Deleting an extraction window (a note re-chunked, a conversation's windows cut again, a
-- document deleted) deletes its mentions and relations by window_id, which no index led with:
-- each window read both tables whole (at a million chunks 229 ms for the mentions and 129 ms
-- for the relations of one window).
create index relations_window_idx on exo_private.relations (window_id);
create index mentions_window_idx on exo_private.mentions (window_id);

-- 0103 counted exo_private.entity_edges in its own transaction and migrate made the triggers
-- that keep it in a later one (sql/300_graph.sql): a relation written between the two was never
-- counted. sql/300_graph.sql now counts the edges again in the transaction that makes the
-- triggers, where they do not exist yet: a database migrated before that loses them here, to be
-- made and counted again so.
drop trigger if exists relations_count_edges_insert on exo_private.relations;
drop trigger if exists relations_count_edges_delete on exo_private.relations;
drop trigger if exists relations_count_edges_update on exo_private.relations;
