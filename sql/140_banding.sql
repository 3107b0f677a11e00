-- Re-banding: a band inferred from a document's date goes stale as time passes (what
-- was current a year ago is recent now), so it is worked out again every day with the
-- rule ingest uses (plpy/banding.py band_by_age). Bands from frontmatter never change.

-- exo_private.reband: bring inferred bands up to `today`; returns documents changed.
create or replace function exo_private.reband(today date default current_date)
returns int
language plpython3u volatile
security invoker
set search_path = exo_private, pg_temp
as $$
# exo:include reband
return run(plpy, today)
$$;
comment on function exo_private.reband(date) is
    'Work out every inferred band again as of today (frontmatter bands stay) and move the document '
    'and its chunks when it changed (a conversation document''s chunks each by their own date, the '
    'document by its newest window); returns how many documents moved. Run daily by pg_cron.';

-- The daily job, in the one database pg_cron serves (cron.database_name; elsewhere the
-- extension is absent and there is nothing to schedule), run as the writer, not a superuser.
do $$
begin
    if exists (select 1 from pg_catalog.pg_extension where extname = 'pg_cron') then
        perform cron.schedule_in_database(
            'exo-reband', '17 3 * * *', 'select exo_private.reband() from exo_private.lift_backend_memory()', current_database(), 'exo_writer');
    end if;
end
$$;
