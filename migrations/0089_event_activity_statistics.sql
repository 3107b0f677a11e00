-- A large timeline's Timeline reads the activities it looks for synonyms among from the
-- statistics of exo_private.events.activity (pg_stats' most common values) instead of counting a
-- million events: up to 1000 of them, not the default 100.
alter table exo_private.events alter column activity set statistics 1000;
