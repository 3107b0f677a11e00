-- The timeline finds a person's or a place's events by index: each event keeps the keys its
-- names are matched by (exo_private.held_name_keys: the whole name and its first and last
-- words, lower-cased), filled by exo_private.store_events. Events are derived: the existing
-- ones are dropped and every document is read again (the person's corrections are kept).
alter table exo_private.events
    add column people_keys text[] not null default '{}',
    add column place_keys text[] not null default '{}';
create index events_people_keys on exo_private.events using gin (people_keys);
create index events_place_keys on exo_private.events using gin (place_keys);
delete from exo_private.events;
select pgmq.send_batch('events', array(
    select jsonb_build_object('document_id', d.id) from exo_private.documents d
    where d.workspace is not null and d.stage in ('chunked', 'embedded', 'graphed')
    order by d.id))
where exists (select 1 from exo_private.documents d
              where d.workspace is not null and d.stage in ('chunked', 'embedded', 'graphed'));
drop function if exists exo_private.event_hidden(exo_private.events, text[], timestamptz);
drop function if exists exo_private.names_match(text, text);
drop function if exists exo_private.timeline_events(text[], date, date, text, text, text[], text[], timestamptz, text[]);
