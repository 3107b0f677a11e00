-- as_of on the rest of the reader API (sql/450_deference.sql, 500_entities.sql,
-- 530_conversations.sql, 600_facts.sql): exo.search_entities, exo.cross_document_entities,
-- exo.related, exo.person_history and exo.facts_search answer as of a moment. The old
-- signatures go, with the private bodies whose arguments grew; the sql files make the new ones.
drop function if exists exo.search_entities(text, text, text[], int, text[]);
drop function if exists exo_private.find_entities(text, text, text[], int, text[]);
drop function if exists exo.cross_document_entities(int, text[], int, text[]);
drop function if exists exo.related(text, text, int, int, text[]);
drop function if exists exo_private.related_to(text, text, int, int, text[]);
drop function if exists exo.person_history(text, int, text[]);
drop function if exists exo.facts_search(text, int, text[]);
drop function if exists exo_private.matching_facts(text, int, text[]);
drop function if exists exo_private.entity_evidence(bigint[], text[]);
