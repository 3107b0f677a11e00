-- 0101 counted exo_private.charged_tallies in its own transaction and migrate made the triggers
-- that keep it in a later one (sql/450_deference.sql): a chunk written between the two was never
-- counted. sql/450_deference.sql now counts the tally again in the transaction that makes the
-- triggers, where they do not exist yet: a database migrated before that loses them here, to be
-- made and counted again so (as 0104 does for exo_private.entity_edges).
drop trigger if exists chunks_tally_charges_insert on exo_private.chunks;
drop trigger if exists chunks_tally_charges_delete on exo_private.chunks;
drop trigger if exists chunks_tally_charges_update on exo_private.chunks;

-- Deleting a document deletes its relations by document_id (the foreign key's cascade), which
-- only an index of its structural relations led with: each document read the table whole (at a
-- million chunks 79-81 ms and 17,690 buffers for a document of 11 relations). This index serves
-- the structural relations' lookups too (sql/310_structural_graph.sql), so theirs goes.
create index if not exists relations_document_idx on exo_private.relations (document_id);
drop index if exists exo_private.relations_structure_document_idx;
