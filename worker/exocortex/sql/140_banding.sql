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
# exo:include banding
import datetime
import json

settings = {
    r["key"]: json.loads(r["value"])
    for r in plpy.execute("select key, value::text from exo_private.settings where key like 'banding.%'")
}
day = datetime.date.fromisoformat(today)
documents = plpy.execute(
    "select id, band::text as band, written_at, canonical from exo_private.documents "
    "where band_source = 'inferred' and written_at is not null and workspace is not null"
)
update_document = plpy.prepare(
    "update exo_private.documents set band = $2::exo_private.band, band_reason = $3 where id = $1",
    ["bigint", "text", "text"],
)
update_chunks = plpy.prepare(
    "update exo_private.chunks set band = $2::exo_private.band where document_id = $1", ["bigint", "text"]
)
changed = 0
for d in documents:
    band, reason = band_by_age(
        datetime.date.fromisoformat(d["written_at"]),
        d["canonical"],
        day,
        settings["banding.current_days"],
        settings["banding.recent_days"],
    )
    if band != d["band"]:
        plpy.execute(update_document, [d["id"], band, reason + "; re-banded " + today])
        plpy.execute(update_chunks, [d["id"], band])
        changed += 1
return changed
$$;
comment on function exo_private.reband(date) is
    'Work out every inferred band again as of today (frontmatter bands stay) and move the document '
    'and its chunks when it changed; returns how many documents moved. Run daily by pg_cron.';

-- The daily job, in the one database pg_cron serves (cron.database_name; elsewhere the
-- extension is absent and there is nothing to schedule), run as the writer, not a superuser.
do $$
begin
    if exists (select 1 from pg_catalog.pg_extension where extname = 'pg_cron') then
        perform cron.schedule_in_database(
            'exo-reband', '17 3 * * *', 'select exo_private.reband()', current_database(), 'exo_writer');
    end if;
end
$$;
