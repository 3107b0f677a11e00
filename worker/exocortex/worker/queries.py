"""The worker's SQL, one named statement each: what the worker asks of the database.

The writes that must happen together are functions in sql/150_worker.sql (read_jobs,
complete_embedding, complete_extraction); what stays here are single statements.
Every statement takes bound parameters (`%s`), never formatted values.
"""

WORKER_SETTINGS = (
    "select key, value from exo_private.settings "
    "where key like any (array['worker.%', 'models.%', 'extraction.%', 'ocr.%', 'ingest.%'])"
)
"""The settings the worker runs by, as (key, value) rows."""

REGISTER_WORKER = (
    "insert into exo_private.workers (name, pid, hostname, queues) values (%s, %s, %s, %s) returning id"
)
BEAT_HEARTBEAT = "update exo_private.workers set heartbeat_at = now(), processed = %s where id = %s"
RECORD_STOP = (
    "update exo_private.workers set stopped_at = now(), heartbeat_at = now(), stop_reason = %s, "
    "processed = %s where id = %s"
)
REAP_WORKERS = "select exo_private.reap_workers(%s)"
"""Mark silent workers dead and take back their messages; returns how many came back."""
MESSAGES_LEFT = (
    "select state, count(*), ceil(extract(epoch from max(visible_at) - now()))::int "
    "from exo_private.queue_messages(%s) where queue = any(%s) group by state order by state"
)
"""(state, messages, seconds until the last is visible again) of the given queues."""
QUEUE_LENGTHS = (
    "select queue, count(*)::int from exo_private.queue_messages(0) where queue = any(%s) group by queue"
)
"""(queue, messages in it, visible or in flight) of the given queues."""

READ_JOBS = "select msg_id, read_ct, message, dead_lettered from exo_private.read_jobs(%s, %s, %s, %s, %s)"
HIDE_MESSAGES = "select count(*) from pgmq.set_vt(%s, %s::bigint[], %s)"
"""Keep messages hidden for the next N seconds (or make them visible then)."""
RETURN_MESSAGES = "select exo_private.return_messages(%s, %s::bigint[])"
ARCHIVE_MESSAGES = "select pgmq.archive(%s, %s::bigint[])"
RELEASE_CLAIMS = (
    "delete from exo_private.worker_claims where queue = %s and msg_id = any(%s) and worker_id = %s"
)
RECORD_FAILURE = (
    "insert into exo_private.job_failures (queue, msg_id, target_id, error_class, message) "
    "values (%s, %s, %s, %s, %s)"
)

CHUNK_BODIES = "select id, body from exo_private.chunks where id = any(%s)"
WINDOW_TO_EXTRACT = (
    "select w.body, exo_private.generation_for(w.workspace, %s) "
    "from exo_private.extraction_windows w where w.id = %s"
)
"""A window's text and the generation the model's reply goes into (null: another model's graph now)."""
OCR_JOB = "select root, path_bytes, sha256, pages from exo_private.ocr_job(%s)"
"""A queued scan that still waits at ocr_pending: where its file is, its sha256 and page count."""
STORE_OCR_TEXT = "select document_id, path, metadata from exo_private.store_ocr_text(%s, %s, %s)"
"""OCR's text into the text cache; the documents of that content that now continue (locked)."""
END_OCR = "select exo_private.end_ocr(%s, %s, %s, %s)"
"""The documents of a content OCR could not read end at a stage with an error class."""
CAPSULE_JOB = "select exo_private.capsule_job(%s)"
"""Build (or drop) the capsule one message names (a document, or a folder, workspace or entity):
{status, capsule_id, ...} (sql/610_capsules.sql)."""
CANCEL_BACKENDS = (
    "select count(*) filter (where pg_cancel_backend(pid)) from pg_stat_activity"
    " where pid = any(%s) and state = 'active' and query like 'select exo_private.capsule_job(%%'"
)
"""Cancel the capsule statements of abandoned jobs (server pids) still running: how many. A pid
whose statement ended since is left alone (its connection may serve another job by now)."""
MESSAGES_TO_EMBED = "select message_id, text from exo_private.messages_to_embed(%s, %s, %s)"
STORE_MESSAGE_EMBEDDINGS = "select exo_private.store_message_embeddings(%s, %s, %s, %s)"
COMPLETE_EMBEDDING = "select exo_private.complete_embedding(%s, %s, %s, %s, %s)"
OUTSIDE_PASSAGES_TO_EMBED = (
    "select outside_id, digest, body from exo_private.kb_outside_passages_to_embed(%s, %s, %s)"
)
STORE_OUTSIDE_EMBEDDINGS = "select exo_private.store_outside_embeddings(%s, %s, %s, %s, %s)"
COMPLETE_EXTRACTION = "select exo_private.complete_extraction(%s, %s, %s, %s, %s, %s, %s, %s)"

TARGET_GONE = "EX001"
"""SQLSTATE: the job's chunk or window no longer exists (sql/150_worker.sql)."""
STALE_REPLY = "EX002"
"""SQLSTATE: the reply belongs to an extraction generation that is no longer current."""


def notify_channel(queue: str) -> str:
    """The channel pgmq notifies when a message is sent to `queue` (migration 0014)."""
    return f"pgmq.q_{queue}.INSERT"


WINDOW_AUTHORS = (
    "select d.conversation_id is not null, d.metadata ->> 'from', "
    "(select p.display_name from exo_private.people p where p.is_owner), "
    "array(select distinct on (e.canonical_key) e.name || chr(9) || e.type::text "
    "from exo_private.mentions m join exo_private.entities e on e.id = m.entity_id "
    "where m.document_id = w.document_id and e.generation = %s order by e.canonical_key, e.id), "
    "d.title, "
    "array(select distinct coalesce(i.display_name, p.display_name, i.handle) "
    "from exo_private.chat_identities i join exo_private.people p on p.id = i.person_id "
    "where p.is_owner and exists (select 1 from exo_private.chat_messages m "
    "where m.conversation_id = d.conversation_id and m.identity_id = i.id)) "
    "from exo_private.extraction_windows w join exo_private.documents d on d.id = w.document_id "
    "where w.id = %s"
)
"""What the pattern pass needs of a window besides its text: whether it is a chat's, the email's
From header, the owner's name, the names (with their types) its document's entities have in the
generation, the document's title (a note about a person is titled by their name), and the names
the owner's lines carry in its conversation (a chat's)."""

MERGE_RELATIONS = "select exo_private.merge_extraction(%s, %s, %s, %s, '[]', %s)"
"""A window's entities and relations merged without marking it extracted (the pattern pass's,
when the chat model failed the window)."""

EVENT_SOURCES = "select chunk_id, message_id, day, day_source, body from exo_private.event_sources(%s)"
CALENDAR_NOTE = (
    "select d.title, d.frontmatter, coalesce(c.written_at, d.written_at), c.id "
    "from exo_private.documents d "
    "join lateral (select x.id, x.written_at from exo_private.chunks x "
    "              where x.workspace = d.workspace and x.document_id = d.id order by x.ordinal limit 1) c on true "
    "where d.id = %s and d.conversation_id is null and d.metadata ->> 'from' is null"
)
"""A note's title, frontmatter, day and first chunk: a calendar-like note's event."""
"""A document's texts to read for events: a note's dated chunks, or the owner's chat lines."""
OWNER_NAMES = (
    "select array(select n from exo_private.people p, "
    "unnest(array[p.display_name, split_part(p.display_name, ' ', 1)]) n where p.is_owner and n <> '')"
)
"""The owner's name and first name: never a person of their own events."""
STORE_EVENTS = "select exo_private.store_events(%s, %s, %s)"
