-- exo.cypher's hint names every closed subject charged in the workspace (and one whose own
-- entity is in its graph), not the subjects whose material hides something there, which
-- withheld text decides; graph_withheld and withheld_graph give no subjects now. sql/ makes
-- them again.
drop function if exists exo_private.graph_withheld(text, text[]);
drop function if exists exo_private.withheld_graph(text, text[]);
