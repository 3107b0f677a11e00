-- exo.dossier takes as_of (sql/500_entities.sql): only the mentions and relations written by then.
-- The old signatures go; the sql file makes the new ones.
drop function if exists exo.dossier(text, text, text[]);
drop function if exists exo_private.entity_dossier(bigint, text[]);
