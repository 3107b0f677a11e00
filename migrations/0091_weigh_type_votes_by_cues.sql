-- Issue 30: each window votes once on a name's type (type_votes); the mentions whose syntax
-- typed the name in that window ("in Larkhaven", "Mr Crane": exocortex.extraction.ner) now weigh
-- in too, kept beside the votes. upsert_entity takes them as a new argument, so its old
-- signature goes (sql/305_entity_identity.sql makes the new one).

alter table exo_private.entities
    add column type_cues jsonb not null default '{}';
comment on column exo_private.entities.type_cues is
    'How many mentions the syntax around them typed, by type ({"Place": 4}), summed over the windows '
    'that named the entity (the worker''s cues: a preposition of where, a street number, a title, a '
    'pronoun for people beside it): upsert_entity chooses the type by type_votes plus these.';

drop function if exists exo_private.upsert_entity(text, int, text, text, text, boolean, text);
