"""exo_private.reband: every inferred band worked out again as of a day (run daily by pg_cron).

`run(plpy, today)` is the whole function (today: the date as ISO text). A document with an
inferred band and a date (not a conversation's) is banded again by its date (banding.band_by_age,
the rule ingest applies) and moves with its chunks when the band changed. A conversation
document's windows are banded each by their own first message's date; the document takes its
newest window's band, and so do windows of undated messages (`conversation_bands` decides).
Bands from frontmatter never change.
"""

import datetime
import json

from banding import band_by_age, banding_settings

DOCUMENTS = (
    "select id, band::text as band, written_at, canonical from exo_private.documents "
    "where band_source = 'inferred' and written_at is not null and workspace is not null "
    "  and conversation_id is null"
)
UPDATE_DOCUMENT = (
    "update exo_private.documents set band = $2::exo_private.band, band_reason = $3 where id = $1"
)
UPDATE_CHUNKS = "update exo_private.chunks set band = $2::exo_private.band where document_id = $1"
CONVERSATIONS = (
    "select d.id, d.band::text as band, "
    "       json_agg(json_build_object('workspace', c.workspace, 'id', c.id, 'band', c.band, "
    "                                  'written_at', c.written_at))::text as chunks "
    "from exo_private.chat_windows w "
    "join exo_private.chunks c on c.workspace = w.workspace and c.id = w.chunk_id "
    "join exo_private.documents d on d.conversation_id = w.conversation_id "
    "group by d.id"
)
UPDATE_CHUNK = "update exo_private.chunks set band = $3::exo_private.band where workspace = $1 and id = $2"


def run(plpy, today):
    """Band every inferred band again as of today; returns how many documents moved."""
    settings = banding_settings(plpy)
    day = datetime.date.fromisoformat(today)
    current_days, recent_days = settings["banding.current_days"], settings["banding.recent_days"]
    documents = plpy.execute(DOCUMENTS)
    update_document = plpy.prepare(UPDATE_DOCUMENT, ["bigint", "text", "text"])
    update_chunks = plpy.prepare(UPDATE_CHUNKS, ["bigint", "text"])
    changed = 0
    for d in documents:
        band, reason = band_by_age(
            datetime.date.fromisoformat(d["written_at"]), d["canonical"], day, current_days, recent_days
        )
        if band != d["band"]:
            plpy.execute(update_document, [d["id"], band, reason + "; re-banded " + today])
            plpy.execute(update_chunks, [d["id"], band])
            changed += 1
    conversations = plpy.execute(CONVERSATIONS)
    update_chunk = plpy.prepare(UPDATE_CHUNK, ["text", "bigint", "text"])
    for d in conversations:
        chunks = json.loads(d["chunks"])
        bands, band, reason = conversation_bands(chunks, day, current_days, recent_days)
        moved = False
        for c, new in zip(chunks, bands, strict=True):
            if new != c["band"]:
                plpy.execute(update_chunk, [c["workspace"], c["id"], new])
                moved = True
        if band != d["band"]:
            plpy.execute(update_document, [d["id"], band, reason + "; re-banded " + today])
            moved = True
        changed += moved
    return changed


def conversation_bands(chunks, day, current_days, recent_days):
    """(bands, band, reason) of a conversation document as of day: each window chunk's band, in
    order (by its own first message's date, written_at; an undated one the document's), and the
    document's band and reason: its newest window's (the first of the newest, on a tie), current
    when no window is dated."""
    newest = None
    dated = {}
    for i, c in enumerate(chunks):
        if c["written_at"]:
            dated[i] = band_by_age(
                datetime.date.fromisoformat(c["written_at"]), False, day, current_days, recent_days,
                "first message of the window",
            )  # fmt: skip
            if newest is None or c["written_at"] > chunks[newest]["written_at"]:
                newest = i
    if newest is None:
        band, reason = "current", "undated conversation"
    else:
        band, reason = dated[newest][0], dated[newest][1] + " (the newest window)"
    return [dated[i][0] if i in dated else band for i in range(len(chunks))], band, reason
