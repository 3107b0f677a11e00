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

-- The daily job, run as the writer, not a superuser (scheduled by the migrator in pg_cron's
-- database for this one: sql/005_cron_jobs.sql).
select exo_private.want_cron_job(
    'exo-reband', '17 3 * * *', 'select exo_private.reband() from exo_private.lift_backend_memory()', 'exo_writer');
