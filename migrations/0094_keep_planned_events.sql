-- Plans beside happenings (issue 31): "we're going to see Dune on Friday", "dinner at Iris's next
-- Saturday?" are kept as events marked planned, on the day they name ahead, so that the timeline
-- can say a plan exists without ever counting it as done (sql/660_events.sql reads planned
-- events only where a caller asks for plans). And the owner's own mail is read for events
-- (exo_private.event_sources): every document is read again by the new extractor.
alter table exo_private.events add column planned boolean not null default false;
comment on column exo_private.events.planned is
    'A plan, not a report that it happened: told with a future ("we''ll swim", "going to see"), a '
    'progressive or a fragment put on a day ahead ("seeing Iris on Friday", "lunch tomorrow"), or '
    'proposed ("dinner next Saturday?"); day is the day it names ahead. Never counted as done.';

select pgmq.send_batch('events', array(
    select jsonb_build_object('document_id', d.id) from exo_private.documents d
    where d.workspace is not null and d.stage in ('chunked', 'embedded', 'graphed')
    order by d.id))
where exists (select 1 from exo_private.documents d
              where d.workspace is not null and d.stage in ('chunked', 'embedded', 'graphed'));
