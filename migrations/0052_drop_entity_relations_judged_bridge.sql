-- exo_private.entity_relations_judged takes the keys its caller already worked out from the
-- bridge (released, closed subjects and their keys) instead of the bridge: the dossier no longer
-- works them out twice. sql/500_entities.sql defines the new signature; the old one goes.
drop function if exists exo_private.entity_relations_judged(bigint, text[]);
