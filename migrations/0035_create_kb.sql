-- A personal knowledge base per user (issue 17): named profiles, per profile and document a
-- lifecycle state with its counters and score, and the one transition table every state change
-- consults (exo_private.kb_next_state, sql/700_kb.sql). The reader writes these tables only
-- through exo_private.kb_write, which runs as exo_kb (created by the migrator, like exo_graph).

create type exo_private.kb_state as enum ('global', 'surfaced', 'suggested', 'claimed', 'pinned', 'demoted');
comment on type exo_private.kb_state is
    'A document in a user''s base: global (only in global search), surfaced (returned, counting), '
    'suggested (a save is proposed), claimed (saved), pinned (consistently relevant, or forced), '
    'demoted (usage dropped or cache misses exceeded).';

create table exo_private.kb_profiles (
    id                bigint generated always as identity primary key,
    name              text not null unique check (name ~ '^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$'),
    searches          bigint not null default 0,
    window_started_at timestamptz,
    window_writes     int not null default 0,
    created_at        timestamptz not null default now()
);
comment on table exo_private.kb_profiles is
    'Users (people or agent profiles) with a personal base: exo user add NAME. searches counts the '
    'searches recorded; window_started_at and window_writes cap the writes per minute '
    '(kb.writes_per_minute).';

create table exo_private.kb_items (
    profile_id         bigint not null references exo_private.kb_profiles (id) on delete cascade,
    document_id        bigint not null references exo_private.documents (id) on delete cascade,
    state              exo_private.kb_state not null default 'global',
    forced             boolean not null default false,
    fetch_count        int not null default 0,
    first_fetched_at   timestamptz,
    last_fetched_at    timestamptz,
    last_chunks        bigint[] not null default '{}',
    absent_streak      int not null default 0,
    declines           int not null default 0,
    next_suggestion_at int not null,
    miss_streak        int not null default 0,
    cache_checks       int not null default 0,
    cache_hits         int not null default 0,
    thumbs             int not null default 0,
    score              float8,
    scored_at          timestamptz,
    high_since         timestamptz,
    low_since          timestamptz,
    state_changed_at   timestamptz not null,
    primary key (profile_id, document_id)
);
create index kb_items_state_idx on exo_private.kb_items (profile_id, state);
create index kb_items_document_idx on exo_private.kb_items (document_id);
comment on table exo_private.kb_items is
    'One row per user and document once the document was returned to the user or acted on.';
comment on column exo_private.kb_items.forced is 'Pinned by the user (force_pin): never demoted by score or misses.';
comment on column exo_private.kb_items.absent_streak is
    'Consecutive searches of the user that did not return the document (resets fetch_count at kb.reset_threshold).';
comment on column exo_private.kb_items.next_suggestion_at is
    'The fetch count at which the document is suggested: kb.fetch_threshold, after the n-th decline '
    'fetch_count + kb.fetch_threshold x 2^n.';
comment on column exo_private.kb_items.miss_streak is
    'Consecutive personal-stage checks in which none of the document''s chunks passed kb.similarity_threshold.';
comment on column exo_private.kb_items.thumbs is 'Thumbs up minus thumbs down.';
comment on column exo_private.kb_items.high_since is
    'The score''s history for the hold days: since when it has been at or above kb.pin_score (null: it is not).';
comment on column exo_private.kb_items.low_since is
    'Since when the score has been below kb.demote_score (null: it is not).';

create table exo_private.kb_transitions (
    from_state exo_private.kb_state not null,
    event      text not null,
    to_state   exo_private.kb_state not null,
    guard      text not null,
    primary key (from_state, event)
);
comment on table exo_private.kb_transitions is
    'Every lifecycle transition (from_state, event) -> to_state, with the guard that raises the event. '
    'A state change not listed here is refused.';

insert into exo_private.kb_transitions (from_state, event, to_state, guard)
select e.from_state::exo_private.kb_state, e.event, e.to_state::exo_private.kb_state, e.guard
from (values
    ('fetch', 'global', 'surfaced', 'returned by a search of the user: fetch_count + 1'),
    ('fetch', 'surfaced', 'surfaced', 'returned again: fetch_count + 1'),
    ('fetch', 'suggested', 'suggested', 'returned again: fetch_count + 1, the suggestion stays pending'),
    ('fetch', 'claimed', 'claimed', 'returned again: fetch_count + 1'),
    ('fetch', 'pinned', 'pinned', 'returned again: fetch_count + 1'),
    ('fetch', 'demoted', 'surfaced', 'returned again after demotion: counts from zero'),
    ('reach_threshold', 'surfaced', 'suggested', 'fetch_count reached next_suggestion_at (kb.fetch_threshold, '
        'after n declines fetch_count + kb.fetch_threshold x 2^n)'),
    ('reset', 'surfaced', 'surfaced', 'absent from kb.reset_threshold consecutive searches of the user: '
        'fetch_count back to 0'),
    ('reset', 'suggested', 'surfaced', 'absent from kb.reset_threshold consecutive searches of the user: '
        'the suggestion lapses, fetch_count back to 0'),
    ('accept', 'suggested', 'claimed', 'the user accepts the suggestion (saves the document)'),
    ('decline', 'suggested', 'surfaced', 'the user declines: next_suggestion_at = fetch_count + '
        'kb.fetch_threshold x 2^declines'),
    ('score_high', 'claimed', 'pinned', 'score at or above kb.pin_score for kb.pin_days'),
    ('score_low', 'claimed', 'demoted', 'score below kb.demote_score for kb.demote_days'),
    ('score_low', 'pinned', 'demoted', 'score below kb.demote_score for kb.demote_days (not a forced pin)'),
    ('miss_streak', 'claimed', 'demoted', 'its chunks missed the personal stage in kb.max_cache_miss_streak '
        'consecutive searches'),
    ('miss_streak', 'pinned', 'demoted', 'its chunks missed the personal stage in kb.max_cache_miss_streak '
        'consecutive searches (not a forced pin)')
) e (event, from_state, to_state, guard)
union all
-- The user's own actions apply in every state.
select s.state, a.event, coalesce(a.to_state, s.state::text)::exo_private.kb_state, a.guard
from pg_catalog.unnest(enum_range(null::exo_private.kb_state)) s (state)
cross join (values
    ('thumbs_up', null, 'the user marks the document useful: thumbs + 1 (the score''s explicit signal)'),
    ('thumbs_down', null, 'the user marks the document not useful: thumbs - 1'),
    ('force_pin', 'pinned', 'the user pins the document: kept and always searched, never demoted'),
    ('force_remove', 'global', 'the user removes the document from the personal base: every counter back to 0')
) a (event, to_state, guard);

insert into exo_private.settings (key, value, description) values
    ('kb.fetch_threshold', '3', 'A document returned this many times to a user is suggested for their base.'),
    ('kb.reset_threshold', '3',
     'A document absent from this many consecutive searches of a user counts its fetches from zero again.'),
    ('kb.similarity_threshold', '0.75',
     'The personal stage keeps a saved document''s chunk at this cosine similarity to the question or above.'),
    ('kb.local_top_k', '3', 'The personal stage keeps at most this many chunks per saved document.'),
    ('kb.max_cache_miss_streak', '10',
     'A saved document whose chunks miss the personal stage in this many consecutive searches is demoted.'),
    ('kb.score_weights', '{"recency": 0.40, "frequency": 0.30, "explicit": 0.20, "hit_rate": 0.15}',
     'Weights of the daily score; the score divides by their sum, so it lies in [0, 1] whatever they add up to.'),
    ('kb.recency_lambda', '0.05', 'Recency is exp(-lambda x days since the last fetch).'),
    ('kb.frequency_saturation', '20', 'Frequency is min(fetch_count / this, 1).'),
    ('kb.pin_score', '0.85', 'A saved document scoring at or above this for kb.pin_days is pinned.'),
    ('kb.pin_days', '7', 'Days a saved document''s score must stay at or above kb.pin_score to be pinned.'),
    ('kb.demote_score', '0.15', 'A saved or pinned document scoring below this for kb.demote_days is demoted.'),
    ('kb.demote_days', '3', 'Days the score must stay below kb.demote_score to demote.'),
    ('kb.writes_per_minute', '240',
     'At most this many recording calls (searches recorded, user actions) per profile per minute.');

-- The reader API gains a profile (the personal stage and the recording of use): the old forms go,
-- sql/400_search.sql makes the new ones.
drop function if exists exo.search(text, text[], int, int, boolean, text[], timestamptz, float8[]);
drop function if exists exo.search_report(text, text[], int, int, boolean, text[], timestamptz, float8[]);
drop function if exists exo.search_json(text, text[], int, int, boolean, text[], timestamptz, float8[]);
drop function if exists exo.context_packet(text, int, text[], boolean, text[], timestamptz, float8[]);
drop function if exists exo.context_packet_json(text, int, text[], boolean, text[], timestamptz, float8[]);
drop function if exists exo_private.retrieve(text, text[], int, int, boolean, text[], timestamptz, float8[]);

-- sql/ files are applied in name order: the search API (sql/400_search.sql) calls this, so it is
-- declared here; sql/700_kb.sql defines it.
create function exo_private.kb_after_search(p_profile text, p_retrieved jsonb) returns jsonb
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$ select p_retrieved $$;

-- A personal hit is a similarity match like the semantic stage's: the same stage weight in the
-- deterministic relevance (plpy/search.py), so the rerank treats it as any candidate.
update exo_private.settings
   set value = jsonb_set(value, '{stage,personal}', coalesce(value #> '{stage,semantic}', '0.5'))
 where key = 'retrieval.rank_weights';
