-- The timeline's figures read exo_private.event_rollup (migration 0097): the (activity, day) and
-- (day) indexes no longer need every column a figure reads (migration 0096 made them cover
-- them: 191 and 143 MB at a million events against a 249 MB table); they find the few events a
-- reading cites, by a range of days.
drop index exo_private.events_activity_day;
drop index exo_private.events_day;
create index events_activity_day on exo_private.events (activity, day);
create index events_day on exo_private.events (day);
