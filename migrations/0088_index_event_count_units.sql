-- The Timeline reads an activity's vocabulary from what its events count in ("routes": a
-- bouldering session counted in routes is a climb where climbs count routes): the events that
-- count in a unit, looked up by it.
create index events_count_unit on exo_private.events (count_unit) where count_unit is not null;
