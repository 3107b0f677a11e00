-- Chat history: deference marks on messages, full-text search over imported messages,
-- and owner linking.
--
-- Care: a message charged for a deferred subject (plpy/deference.py message_marks: a name
-- and a cue in it together with the message before or after it) stays out of every answer
-- unless the caller bridges the subject; a last row says what was withheld, never the text.

-- exo_private.mark_messages: set the deference marks of chat messages, a conversation at a time.
create or replace function exo_private.mark_messages(every_conversation boolean default false)
returns int
language plpython3u volatile
security invoker
set search_path = exo_private, pg_temp
as $$
# exo:include mark_messages
return run(plpy, every_conversation)
$$;
comment on function exo_private.mark_messages(boolean) is
    'Set the deference marks (charged, charged_subjects) of the chat messages of every conversation '
    'that has a message not yet marked, or of every conversation (after the deference list changed), '
    'in place; returns how many messages changed.';

-- Messages imported before they had marks (migration 0009) are marked once, here; an import
-- marks its own messages, so this finds nothing afterwards.
select exo_private.mark_messages();

-- exo_private.message_bands: the band of each message date as of a day (plpy/banding.py band_by_age).
create or replace function exo_private.message_bands(written date[], today date)
returns text[]
language plpython3u stable strict
security invoker
set search_path = exo_private, pg_temp
set datestyle = 'ISO, YMD'  -- dates reach Python as ISO text
as $$
# exo:include banding
import datetime

settings = banding_settings(plpy)
day = datetime.date.fromisoformat(today)
return [
    None
    if w is None
    else band_by_age(
        datetime.date.fromisoformat(w), False, day, settings["banding.current_days"], settings["banding.recent_days"]
    )[0]
    for w in written
]
$$;
comment on function exo_private.message_bands(date[], date) is
    'The band (current, recent, archival) of each date as of today, by the rule of document bands '
    '(plpy/banding.py band_by_age, the banding.* settings); null for a null date, and for null '
    'arguments. exo.search_messages bands the messages it finds with it.';

-- exo.search_messages: chat messages ranked by BM25 for a question, best first.
create or replace function exo.search_messages(
    query text,
    max_results int default 20,
    bridge text[] default '{}',
    open_archive boolean default null,
    as_of timestamptz default now()
)
returns table (
    message_id         bigint,
    conversation_id    bigint,
    conversation_title text,
    source             text,
    sender             text,
    is_owner           boolean,
    sent_at            timestamptz,
    body               text,
    rank               real,
    band               text,
    withheld           jsonb
)
language plpgsql stable
security definer
set search_path = exo_private, public, pg_temp  -- pg_textsearch resolves its score function by name
as $$
declare
    pool int;  -- how many of the best matches are looked at: the results are the first of them
               -- that may be shown; what is withheld or left in the archive is counted among them
    question text := pg_catalog.left(search_messages.query, 1000);
    terms text := exo_private.bm25_text(question);  -- the question as BM25 reads it
    moment timestamptz := coalesce(search_messages.as_of, pg_catalog.now());
    zone text;
    day date;
    archive_open boolean;
    keys text[];
    releases boolean;
begin
    if question is null then
        perform exo_private.invalid_argument('query must not be null');
    end if;
    if max_results is null or max_results not between 1 and 200 then
        perform exo_private.invalid_argument(
            format('max_results must be between 1 and 200, got %s', coalesce(max_results::text, 'null')));
    end if;
    if cardinality(bridge) > 50 then
        perform exo_private.invalid_argument(format('bridge must name at most 50 subjects, got %s', cardinality(bridge)));
    end if;
    if exists (select 1 from unnest(bridge) b where pg_catalog.length(b) > 200) then
        perform exo_private.invalid_argument('bridge names must be at most 200 characters each');
    end if;
    pool := least(greatest(5 * max_results, 200), 1000);
    -- A message's day, and as_of's, in the time zone of the chat windows.
    select coalesce((select s.value #>> '{}' from exo_private.settings s where s.key = 'chat.time_zone'), 'UTC')
      into zone;
    day := (moment at time zone zone)::date;
    -- The archive opens as in exo.search: open_archive, else a temporal signal in the question.
    archive_open := coalesce(search_messages.open_archive,
                             (exo.temporal_signal(question, day) ->> 'opens_archive')::boolean, false);
    keys := exo_private.released_keys(coalesce(bridge, '{}'));
    -- A search that releases no charged message ranks by the index of the messages charged for
    -- nothing (chat_messages_bm25_open, || ''), so no statistic it reads (how rare a word is, how
    -- long a message) and no match that fills its pool is a withheld message's; one that releases
    -- a subject ranks by the index of every message.
    releases := keys <> '{}' and exists (
        select 1 from exo_private.chat_messages m cross join lateral unnest(m.charged_subjects) s (subject)
        where m.charged_subjects <> '{}' and exo_private.canonical_key(s.subject) = any (keys));
    return query
    with hits as materialized (
        (select m.id, m.conversation_id, m.identity_id, m.sent_at, m.charged_subjects,
                (m.sent_at at time zone zone)::date as sent_on,
                -((exo_private.bm25_text(m.body) || '') operator(public.<@>)
                  public.to_bm25query(terms, 'exo_private.chat_messages_bm25_open')) as score
         from exo_private.chat_messages m
         where not releases and m.charged_subjects = '{}' and m.charged is not null
           and (m.sent_at is null or m.sent_at <= moment)
           and (exo_private.bm25_text(m.body) || '') operator(public.<@>)
               public.to_bm25query(terms, 'exo_private.chat_messages_bm25_open') < 0
         order by (exo_private.bm25_text(m.body) || '') operator(public.<@>)
                  public.to_bm25query(terms, 'exo_private.chat_messages_bm25_open'),
                  m.sent_at desc nulls last, m.id desc
         limit pool)
        union all
        (select m.id, m.conversation_id, m.identity_id, m.sent_at, m.charged_subjects,
                (m.sent_at at time zone zone)::date as sent_on,
                -(exo_private.bm25_text(m.body) operator(public.<@>)
                  public.to_bm25query(terms, 'exo_private.chat_messages_bm25')) as score
         from exo_private.chat_messages m
         where releases and (m.sent_at is null or m.sent_at <= moment)
           and exo_private.bm25_text(m.body) operator(public.<@>)
               public.to_bm25query(terms, 'exo_private.chat_messages_bm25') < 0
         order by exo_private.bm25_text(m.body) operator(public.<@>)
                  public.to_bm25query(terms, 'exo_private.chat_messages_bm25'),
                  m.sent_at desc nulls last, m.id desc
         limit pool)
    ), banded as materialized (
        select h.*, b.band,
               -- most messages are charged for nothing: no call (with its settings) for them
               case when h.charged_subjects = '{}' then '{}'::text[]
                    else exo_private.unreleased(h.charged_subjects, keys) end as held
        from hits h
        join unnest((select array_agg(x.id order by x.id) from hits x),
                    exo_private.message_bands((select array_agg(x.sent_on order by x.id) from hits x), day))
             b (id, band) on b.id = h.id
    ), lexed as materialized (
        -- What shown-able matches say, as lexemes: only where the rule below decides anything
        -- (the archive closed by default, not opened by the question), each body once.
        select b.band, pg_catalog.to_tsvector('english', exo_private.bm25_text(m.body)) as words
        from banded b
        join exo_private.chat_messages m on m.id = b.id
        where b.held = '{}' and not archive_open and search_messages.open_archive is null
    ), only_archival as (
        -- A word of the question (an English lexeme of three letters or more) that a few shown-able
        -- archival matches hold and no shown-able present one does, as exo.search opens the archive
        -- (plpy/stages.py only_archival_word): weak present matches do not hide strong old ones.
        -- What deference withholds counts on neither side, so it changes nothing shown.
        select 1
        from unnest(pg_catalog.tsvector_to_array(pg_catalog.to_tsvector('english', terms))) w (lexeme)
        cross join lateral (
            select count(*) filter (where l.band = 'archival') as archival,
                   count(*) filter (where l.band is distinct from 'archival') as present
            from lexed l
            where l.words @@ pg_catalog.plainto_tsquery('simple', w.lexeme)
        ) n
        where pg_catalog.length(w.lexeme) >= 3 and n.present = 0 and n.archival between 1 and 19
        limit 1
    ), opened as (
        -- Like exo.search, a closed archive is a preference: when open_archive is null and no
        -- message of the present bands can be shown, or a word of the question is only archival,
        -- the archive answers.
        select archive_open
               or (search_messages.open_archive is null
                   and (not exists (select 1 from banded b
                                    where b.band is distinct from 'archival' and b.held = '{}')
                        or exists (select 1 from only_archival))) as every_band
    ), visible as materialized (
        select b.* from banded b cross join opened o
        where o.every_band or b.band is distinct from 'archival'
    ), shown as (
        select v.*, row_number() over (order by v.score desc, v.sent_at desc nulls last, v.id desc) as ord
        from visible v
        where v.held = '{}'
        order by ord
        limit max_results
    ), held as (
        -- Whatever the question: every message sent by then that is charged for a subject the
        -- bridge leaves closed (chat_messages_charged_sent). A count of the matches among them
        -- would tell, one guess a call, which words withheld messages hold.
        select s.subject, count(*) as messages
        from exo_private.chat_messages m
        cross join lateral unnest(exo_private.unreleased(m.charged_subjects, keys)) s (subject)
        where m.charged_subjects <> '{}' and (m.sent_at is null or m.sent_at <= moment)
        group by s.subject
    ), archived as (
        -- the archival matches that may be shown: what is withheld counts on neither side
        select count(*) as messages
        from banded b cross join opened o
        where not o.every_band and b.band = 'archival' and b.held = '{}'
        having count(*) > 0
    )
    select x.id, x.conversation_id, x.title, x.source, x.sender, x.is_owner, x.sent_at, x.body, x.score,
           x.band, x.hint
    from (
        select 0 as part, sh.ord, sh.id, sh.conversation_id, c.title, c.source,
               coalesce(i.display_name, p.display_name, i.handle) as sender,
               coalesce(p.is_owner, false) as is_owner, sh.sent_at, m.body, sh.score::real as score, sh.band,
               null::jsonb as hint
        from shown sh
        join exo_private.chat_messages m on m.id = sh.id
        join exo_private.chat_conversations c on c.id = sh.conversation_id
        join exo_private.chat_identities i on i.id = sh.identity_id
        left join exo_private.people p on p.id = i.person_id
        union all
        select 1, row_number() over (order by hd.subject), null, null, null, null, null,
               null, null, null, null, null,
               jsonb_build_object('subject', hd.subject, 'messages', hd.messages,
                                  'how', exo_private.hint_how(hd.subject))
        from held hd
        union all
        select 2, 1, null, null, null, null, null, null, null, null, null, null,
               jsonb_build_object('band', 'archival', 'messages', a.messages,
                                  'how', 'To include them, ask with open_archive => true, or name the time '
                                         'you mean in the question (a year, "back in 2019", "years ago").')
        from archived a
    ) x
    order by x.part, x.ord;
end
$$;
comment on function exo.search_messages(text, int, text[], boolean, timestamptz) is
    'Chat messages ranked by BM25 for a question (pg_textsearch, English stemming: every word counts, '
    'none is required, stop words need not match), best first (rank, then newest): message_id, '
    'conversation_id, conversation_title, source, sender, is_owner, sent_at, body, rank, band (the '
    'message''s band by its age as of as_of, as for documents; null when undated), withheld (null). '
    'Messages sent after as_of are left out. Bands as in exo.search: archival messages are left out '
    'unless open_archive is true, or open_archive is null and the question carries a temporal signal '
    '(exo.temporal_signal), or nothing of the present bands answers, or a word of the question (an '
    'English lexeme of 3+ letters) is held by 1-19 archival matches and no present one; when they are '
    'left out, one last '
    'row has only withheld: {band: "archival", messages (how many that may be shown matched), how}. '
    'Care: a message charged for a deferred subject (its name or an alias near a cue, in the '
    'message or the one before or after it) is left out unless bridge names the subject (by name '
    'or alias); one row per such subject with charged messages sent by as_of has only withheld: '
    '{subject, messages (all of them, whatever the question), how}. '
    'Everything is decided among the best 5 x max_results matches (at least 200), by the BM25 '
    'statistics of the messages charged for nothing unless bridge releases a charged message. A blank query finds no message; only its first 1,000 '
    'characters count. Raises invalid_parameter_value for a null query, max_results outside 1..200, '
    'or a bridge of more than 50 names or a name over 200 characters.';

-- exo_private.link_owner_identity: link a chat identity to the owner person.
create or replace function exo_private.link_owner_identity(source text, handle text)
returns bigint
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    owner_id    bigint;
    identity_id bigint;
begin
    select p.id into owner_id from exo_private.people p where p.is_owner;
    if owner_id is null then
        raise exception 'there is no owner person'
            using hint = 'insert a row into exo_private.people with is_owner = true';
    end if;
    update exo_private.chat_identities i
       set person_id = owner_id
     where i.source = link_owner_identity.source
       and i.handle = link_owner_identity.handle
    returning i.id into identity_id;
    if identity_id is null then
        raise exception 'chat identity % of source % does not exist', handle, source
            using hint = 'import a chat in which it appears first';
    end if;
    return identity_id;
end
$$;
comment on function exo_private.link_owner_identity(text, text) is
    'Link the chat identity (source, handle) to the owner person; returns the identity id. '
    'Raises when the identity or the owner does not exist.';
