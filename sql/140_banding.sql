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

settings = banding_settings(plpy)
day = datetime.date.fromisoformat(today)
documents = plpy.execute(
    "select id, band::text as band, written_at, canonical from exo_private.documents "
    "where band_source = 'inferred' and written_at is not null and workspace is not null "
    "  and conversation_id is null"
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

# A conversation document's windows each by their own first message's date; the document
# takes its newest window's band, and so do windows of undated messages.
conversations = plpy.execute(
    "select d.id, d.band::text as band, "
    "       json_agg(json_build_object('workspace', c.workspace, 'id', c.id, 'band', c.band, "
    "                                  'written_at', c.written_at))::text as chunks "
    "from exo_private.chat_windows w "
    "join exo_private.chunks c on c.workspace = w.workspace and c.id = w.chunk_id "
    "join exo_private.documents d on d.conversation_id = w.conversation_id "
    "group by d.id"
)
update_chunk = plpy.prepare(
    "update exo_private.chunks set band = $3::exo_private.band where workspace = $1 and id = $2",
    ["text", "bigint", "text"],
)
for d in conversations:
    chunks = json.loads(d["chunks"])
    newest = None
    for c in chunks:
        if c["written_at"]:
            c["new"], c["reason"] = band_by_age(
                datetime.date.fromisoformat(c["written_at"]),
                False,
                day,
                settings["banding.current_days"],
                settings["banding.recent_days"],
                "first message of the window",
            )
            if newest is None or c["written_at"] > newest["written_at"]:
                newest = c
    band = newest["new"] if newest else "current"
    moved = False
    for c in chunks:
        if c.get("new", band) != c["band"]:
            plpy.execute(update_chunk, [c["workspace"], c["id"], c.get("new", band)])
            moved = True
    if band != d["band"]:
        reason = newest["reason"] + " (the newest window)" if newest else "undated conversation"
        plpy.execute(update_document, [d["id"], band, reason + "; re-banded " + today])
        moved = True
    changed += moved
return changed
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
