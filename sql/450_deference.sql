-- Deference: the one definition of what a caller's bridge releases and what stays withheld,
-- for every reader path (the exo API, exo.cypher's row security, chats). plpy/search.py's
-- Deference is the same rule for search; tests/test_withheld.py checks that they agree.
--
-- A bridge (bridge => array['name or alias']) releases a charged subject when any of its
-- names (its own, and every name of a deferred subject it is a name of) is bridged (a name
-- given, and every name of a deferred subject given by a name or alias). Every
-- charged subject counts, listed or only declared by frontmatter; one whose key cannot be
-- computed stays closed (over-withholding is the safe direction). From that: a chunk or chat
-- message is withheld while one of its charged subjects is closed; a mention without a chunk
-- while a chunk its extraction window overlaps is; an entity while it is a closed deferred
-- subject (by the canonical key of a name or alias) or while every mention of it is withheld;
-- a relation while either end is not shown in its window; a document while its frontmatter
-- charges a closed subject or every chunk of it is withheld.

-- exo_private.released_keys: the canonical keys a bridge opens.
create or replace function exo_private.released_keys(bridge text[])
returns text[]
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- A bridged subject opens every name of it that no unbridged subject shares: an alias
    -- two deferred subjects share stays closed until both are bridged, so bridging one person
    -- never opens another's material. A bridged name on no list opens itself (a subject only
    -- a document's frontmatter charges). The rule of plpy/search.py Deference.released_keys.
    with given as (
        select array(select k from unnest(coalesce(bridge, '{}')) b, exo_private.canonical_key(b) k
                     where k is not null) as keys
    ), subjects as materialized (
        select s.keys, s.keys && g.keys as bridged
        from exo_private.deferred_subjects d
        cross join given g
        cross join lateral (select array(select k from unnest(d.subject || d.aliases) n,
                                                     exo_private.canonical_key(n) k
                                         where k is not null) as keys) s
    )
    select array(
        select k from given g, unnest(g.keys) k
        where not exists (select 1 from subjects s where k = any (s.keys))
        union
        select k from subjects s, unnest(s.keys) k
        where s.bridged
          and not exists (select 1 from subjects o where not o.bridged and k = any (o.keys))
        order by 1)
$$;
comment on function exo_private.released_keys(text[]) is
    'Canonical keys a bridge opens: a charged subject whose key is among them is released. Every '
    'name and alias of a deferred subject the bridge names, except one an unbridged subject shares, '
    'and each bridged name on no list: the rule of plpy/search.py Deference.released_keys.';

-- exo_private.deferred_subject_names: every name and alias on the list, with its canonical key.
create or replace function exo_private.deferred_subject_names()
returns table (subject text, name text, key text)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    select distinct s.subject, n.name, k.key
    from exo_private.deferred_subjects s
    cross join lateral unnest(s.subject || s.aliases) n (name)
    cross join lateral (select exo_private.canonical_key(n.name) as key) k
    where k.key is not null
$$;
comment on function exo_private.deferred_subject_names() is
    'The name and every alias of every deferred subject, as written and as a canonical key, with the '
    'subject: an entity, a fact or a capsule of an entity with one of these keys is that subject.';

-- exo_private.closed_subject_names: every name of the deferred subjects a bridge leaves closed.
create or replace function exo_private.closed_subject_names(bridge text[])
returns table (subject text, name text, key text)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    with released as materialized (
        select exo_private.released_keys(bridge) as keys
    )
    select n.subject, n.name, n.key
    from exo_private.deferred_subject_names() n
    cross join released r
    where not (exo_private.canonical_key(n.subject) = any (r.keys))
$$;
comment on function exo_private.closed_subject_names(text[]) is
    'The name and every alias of each deferred subject the bridge does not open, as written and as '
    'canonical keys, with the subject: an entity or a fact with one of these keys is that subject.';

-- exo_private.closed_subject_keys: the names of deferred subjects a bridge leaves closed.
create or replace function exo_private.closed_subject_keys(bridge text[])
returns table (subject text, key text)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    select distinct n.subject, n.key from exo_private.closed_subject_names(bridge) n
$$;
comment on function exo_private.closed_subject_keys(text[]) is
    'Canonical keys of the names and aliases of every deferred subject the bridge does not open, '
    'with the subject: an entity with one of these keys is that subject.';

-- exo_private.phrase_pattern: a name or cue as a case-insensitive pattern of whole words.
create or replace function exo_private.phrase_pattern(phrase text)
returns text
language sql immutable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- The rule of plpy/deference.py _phrase: the words in order, any white space between them,
    -- no letter or digit just before or after. Each word's own characters are literal.
    select '(?<!\w)' || pg_catalog.string_agg(pg_catalog.regexp_replace(w.word, '([\\^$.|?*+()\[\]{}])', '\\\1', 'g'),
                                              '\s+' order by w.n) || '(?!\w)'
    from pg_catalog.regexp_split_to_table(pg_catalog.btrim(phrase), '\s+') with ordinality w (word, n)
    where w.word <> ''
$$;
comment on function exo_private.phrase_pattern(text) is
    'A regular expression (for ~*) that finds the phrase as whole words, any white space between '
    'them: the rule plpy/deference.py applies to names and cues. Null for a blank phrase.';

-- exo_private.cue_pattern: one pattern that finds any cue of deference.cues.
create or replace function exo_private.cue_pattern()
returns text
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    select coalesce(pg_catalog.string_agg('(?:' || p.pattern || ')', '|'), '[^\s\S]')
    from exo_private.settings s
    cross join lateral jsonb_array_elements_text(s.value) c (cue)
    cross join lateral (select exo_private.phrase_pattern(c.cue) as pattern) p
    where s.key = 'deference.cues' and p.pattern is not null
$$;
comment on function exo_private.cue_pattern() is
    'A regular expression (for ~*) that finds any cue of the setting deference.cues as whole words; '
    'one that finds nothing when there is none.';

-- exo_private.unreleased: the charged subjects of a chunk or message a bridge leaves closed.
create or replace function exo_private.unreleased(charged text[], released text[])
returns text[]
language sql immutable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- Every charged subject counts, listed or only declared by frontmatter; one whose key
    -- cannot be computed stays closed (over-withholding is the safe direction).
    select case when charged is null or charged = '{}' then '{}'::text[]
                else coalesce((select array_agg(distinct s order by s) from unnest(charged) s
                               where (exo_private.canonical_key(s) = any (released)) is not true),
                              '{}') end
$$;
comment on function exo_private.unreleased(text[], text[]) is
    'The subjects of charged (a chunk''s or a chat message''s charged_subjects) whose key is not '
    'among released (exo_private.released_keys): empty when the chunk or message may be shown.';

-- exo_private.window_charges: the charged chunks each extraction window overlaps.
-- A view, not a function: the planner inlines it into the walks that ask it of every relation
-- they read (exo_private.related_entities, typed_neighbours), a probe of the window and one of
-- its document's charged chunks (chunks_charged_document_idx) each; a function call per relation
-- cost three times as much (a million chunks: 36 against 11 us). The walks ask it in a
-- `not exists (... offset 0)`: the fence keeps the planner from its alternative of hashing every
-- row of the view once (each charged chunk's windows: 700 ms at a million chunks, the list of
-- hidden windows over again) when it expects many relations to be read, as for a hub.
create or replace view exo_private.window_charges with (security_invoker = true) as
select w.id as window_id, c.id as chunk_id, c.charged_subjects
from exo_private.extraction_windows w
join exo_private.chunks c
  on c.workspace = w.workspace and c.document_id = w.document_id
 and c.char_start < w.char_end and c.char_end > w.char_start
where c.charged_subjects <> '{}';
comment on view exo_private.window_charges is
    'Each extraction window with every charged chunk it overlaps and that chunk''s charged subjects: '
    'a mention without a chunk, and any relation, of a window is withheld while one of them is '
    '(exo_private.unreleased of its subjects not empty): window_withheld, and the graph and path '
    'stages'' walks.';

-- exo_private.window_withheld: why a mention without a chunk may not be shown.
create or replace function exo_private.window_withheld(p_window bigint, released text[])
returns text[]
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- The name was in no single chunk of the window: every chunk the window overlaps counts.
    select coalesce(array_agg(distinct s order by s), '{}')
    from exo_private.window_charges x
    cross join lateral unnest(exo_private.unreleased(x.charged_subjects, released)) s
    where x.window_id = p_window
$$;
comment on function exo_private.window_withheld(bigint, text[]) is
    'The closed charged subjects of the chunks an extraction window overlaps: what keeps a mention '
    'without a chunk out of an answer; empty when it may be shown.';

-- exo_private.closed_chunks: the charged chunks a bridge leaves closed.
create or replace function exo_private.closed_chunks(bridge text[])
returns table (
    chunk_id bigint, workspace text, document_id bigint, char_start int, char_end int, withheld text[]
)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- The charged chunks are read once (a seq scan: chunks_charged_idx, a GIN index, serves
    -- only containment); each distinct set of charged subjects is judged once (they are few).
    with released as materialized (
        select exo_private.released_keys(bridge) as keys
    ), charged as materialized (
        select c.id, c.workspace, c.document_id, c.char_start, c.char_end, c.charged_subjects
        from exo_private.chunks c
        where c.charged_subjects <> '{}'
    ), judged as materialized (
        select k.subjects, exo_private.unreleased(k.subjects, r.keys) as withheld
        from (select distinct c.charged_subjects as subjects from charged c) k
        cross join released r
    )
    select c.id, c.workspace, c.document_id, c.char_start, c.char_end, j.withheld
    from judged j
    join charged c on c.charged_subjects = j.subjects
    where j.withheld <> '{}'
$$;
comment on function exo_private.closed_chunks(text[]) is
    'Every chunk charged for a subject the bridge leaves closed: its id (unique across '
    'workspaces), workspace, document and span, and withheld, those subjects.';

-- exo_private.charged_counts: how many chunks each charged subject has in each of some workspaces.
create or replace function exo_private.charged_counts(p_workspaces text[])
returns table (subject text, workspace text, n int)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- a lookup: the tally is kept as chunks are written (exo_private.tally_charges)
    select t.subject, t.workspace, t.n
    from exo_private.charged_tallies t
    where t.workspace = any (p_workspaces) and t.n > 0
$$;
comment on function exo_private.charged_counts(text[]) is
    'Per charged subject and workspace of p_workspaces, how many chunks (document chunks and chat '
    'windows) are charged for it: what a search''s hints count, whatever its question (read from '
    'exo_private.charged_tallies).';

-- exo_private.subject_hints: the hints of the functions asked about one entity.
create or replace function exo_private.subject_hints(p_workspaces text[], bridge text[], p_named text[] default '{}')
returns table (subject text, workspace text, hint jsonb)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- Whatever the entity asked, as a search's hints: one row per closed subject charged in a
    -- workspace asked about. A count of what withheld material says of the entity (its mentions
    -- there, its relations) would tell, one guess a call, whether that material names it.
    -- p_named adds the closed subjects left out of what the caller may see (the entity is one,
    -- or open text relates it to one): the owner's list decides those, not withheld text.
    with released as materialized (
        select exo_private.released_keys(bridge) as keys
    ), charged as (
        select t.subject, t.workspace, t.n
        from exo_private.charged_counts(coalesce(p_workspaces, array(select w.name from exo_private.workspaces w))) t
    ), wanted as (
        select c.subject, c.workspace from charged c
        union
        select s.subject, w.workspace from unnest(p_named) s (subject) cross join unnest(p_workspaces) w (workspace)
    )
    select w.subject, w.workspace,
           jsonb_build_object('subject', w.subject, 'workspace', w.workspace, 'chunks', coalesce(c.n, 0),
                              'how', exo_private.hint_how(w.subject))
    from wanted w
    cross join released r
    left join charged c on c.subject = w.subject and c.workspace = w.workspace
    where exo_private.unreleased(array[w.subject], r.keys) <> '{}'
$$;
comment on function exo_private.subject_hints(text[], text[], text[]) is
    'The hints of exo.dossier, related, timeline and search_entities: per subject the bridge leaves '
    'closed and workspace of p_workspaces (null: all), where the subject has charged chunks or is one of '
    'p_named, {subject, workspace, chunks (charged there, whatever is asked), how}.';

-- exo_private.tally_charges: a chunk written keeps exo_private.charged_tallies.
create or replace function exo_private.tally_charges()
returns trigger
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    -- in the order of the tally's key, so two writers of the same subjects wait, not deadlock
    if tg_op in ('DELETE', 'UPDATE') then
        update exo_private.charged_tallies t set n = t.n - d.k
        from (select s, count(*)::int as k from unnest(old.charged_subjects) s group by s order by s) d
        where t.workspace = old.workspace and t.subject = d.s;
    end if;
    if tg_op in ('INSERT', 'UPDATE') then
        insert into exo_private.charged_tallies as t (workspace, subject, n)
        select new.workspace, s, count(*)::int from unnest(new.charged_subjects) s group by s order by s
        on conflict (workspace, subject) do update set n = t.n + excluded.n;
    end if;
    return null;
end
$$;
comment on function exo_private.tally_charges() is
    'Trigger: a chunk inserted, deleted or re-marked (or moved to another workspace: a delete and '
    'an insert) adds to or takes from exo_private.charged_tallies the subjects it is charged for.';

-- Migration 0101 counted the tally in its own transaction; these triggers are made in this one,
-- later: a chunk written between the two would never be counted. Where the triggers are new, the
-- tally is counted again here, writers of chunks kept out until they exist (commit).
do $$
begin
    if not exists (select 1 from pg_catalog.pg_trigger
                   where tgrelid = 'exo_private.chunks'::regclass and tgname = 'chunks_tally_charges_insert') then
        lock table exo_private.chunks in share row exclusive mode;
        delete from exo_private.charged_tallies;
        insert into exo_private.charged_tallies (workspace, subject, n)
        select c.workspace, s.subject, count(*)
        from exo_private.chunks c
        cross join lateral unnest(c.charged_subjects) s (subject)
        where c.charged_subjects <> '{}'
        group by 1, 2;
    end if;
end
$$;
create or replace trigger chunks_tally_charges_insert
    after insert on exo_private.chunks
    for each row when (new.charged_subjects <> '{}') execute function exo_private.tally_charges();
create or replace trigger chunks_tally_charges_delete
    after delete on exo_private.chunks
    for each row when (old.charged_subjects <> '{}') execute function exo_private.tally_charges();
create or replace trigger chunks_tally_charges_update
    after update of charged_subjects, workspace on exo_private.chunks
    for each row when (old.charged_subjects <> '{}' or new.charged_subjects <> '{}')
    execute function exo_private.tally_charges();

-- exo_private.withholds_windows: whether a search withholds any extraction window of a workspace.
create or replace function exo_private.withholds_windows(p_workspace text, p_released text[])
returns boolean
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- Only a window overlapping a chunk the search withholds is (exo_private.window_charges):
    -- where the workspace holds none, a walk judges no window.
    select p_released is not null and exists (
        select 1 from exo_private.chunks c
        where c.workspace = p_workspace and c.charged_subjects <> '{}'
          and exo_private.unreleased(c.charged_subjects, p_released) <> '{}')
$$;
comment on function exo_private.withholds_windows(text, text[]) is
    'Whether p_workspace holds a chunk charged for a subject whose key is not among p_released (null: '
    'every subject released): where it holds none, no extraction window of it overlaps one '
    '(exo_private.window_charges), and the graph and path stages judge none.';

-- exo_private.hidden_entities: the entities of a workspace that are subjects a search leaves closed.
create or replace function exo_private.hidden_entities(p_workspace text, p_released text[])
returns bigint[]
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    select coalesce(array_agg(distinct e.id), '{}')
    from exo_private.deferred_subject_names() n
    join exo_private.entities e on e.workspace = p_workspace and e.canonical_key = n.key
    where p_released is not null
      and not (exo_private.canonical_key(n.subject) = any (p_released))
$$;
comment on function exo_private.hidden_entities(text, text[]) is
    'The entities of p_workspace that are a deferred subject (by a name or an alias) whose key is not '
    'among p_released (null: none): the graph and path stages pass through none of them.';

-- exo_private.related_entities: the neighbourhood of an entity, hub-safe.
create or replace function exo_private.related_entities(
    p_entity bigint, p_max_depth int default 2, p_per_node int default 50,
    p_released text[] default null, p_hidden_entities bigint[] default '{}'
)
returns table (entity_id bigint, depth int, name text, type exo_private.entity_type)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- Level sets, not paths: UNION keeps one row per (entity, depth), and every node of a
    -- frontier adds at most p_per_node neighbours (lowest ids first) from its distinct
    -- neighbours (exo_private.entity_edges), so a hub of any degree, and an entity related to
    -- another in thousands of windows, costs p_per_node rows per level.
    with recursive judged as materialized (
        -- A relation is evidence of its extraction window: where the workspace holds a chunk
        -- the search withholds, a pair is walked only through a relation whose window overlaps
        -- none (exo_private.window_charges, asked of the pairs walked).
        select exo_private.withholds_windows(e.workspace, p_released) as windows
        from exo_private.entities e
        where e.id = p_entity
    ), walk (entity_id, depth) as (
        select p_entity, 0
        union
        select nb.id, w.depth + 1
        from walk w
        cross join judged j
        cross join lateral (
            select x.neighbour_id as id
            from exo_private.entity_edges x
            where x.entity_id = w.entity_id and x.neighbour_id <> all (p_hidden_entities)
              and (not j.windows or exists (
                  select 1
                  from (values (w.entity_id, x.neighbour_id), (x.neighbour_id, w.entity_id)) p (s, o)
                  join exo_private.relations r on r.subject_id = p.s and r.object_id = p.o
                  where not exists (
                      select 1 from exo_private.window_charges k
                      where k.window_id = r.window_id
                        and exo_private.unreleased(k.charged_subjects, p_released) <> '{}' offset 0)))
            order by x.neighbour_id
            limit greatest(1, least(coalesce(p_per_node, 50), 1000))
        ) nb
        where w.depth < greatest(1, least(coalesce(p_max_depth, 2), 3))
    )
    select d.entity_id, d.depth, e.name, e.type
    from (
        select w.entity_id, min(w.depth)::int as depth
        from walk w
        where w.entity_id <> p_entity
        group by w.entity_id
    ) d
    join exo_private.entities e on e.id = d.entity_id
    order by d.depth, d.entity_id
$$;
comment on function exo_private.related_entities(bigint, int, int, text[], bigint[]) is
    'Entities related to p_entity (either direction) within p_max_depth (clamped to 1..3) steps, '
    'each once at its smallest depth, the entity itself excluded; each node expands at most '
    'p_per_node (1..1000) of its distinct neighbours (exo_private.entity_edges), lowest ids first: '
    'a level-set walk that stays fast on hubs. Never along a relation whose extraction window '
    'overlaps a chunk charged for a subject whose key is not among p_released (null: every '
    'subject released), nor through an entity of p_hidden_entities (exo_private.hidden_entities): '
    'what a search withholds.';

-- exo_private.entity_mentions: the mentions of entities, each with what withholds it.
create or replace function exo_private.entity_mentions(ids bigint[], bridge text[], in_document bigint default null)
returns table (
    entity_id bigint, workspace text, document_id bigint, chunk_id bigint, window_id bigint,
    surface text, withheld text[]
)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- The closed chunks are few and found through an index: a hash join with them decides
    -- nearly every mention without touching the chunks themselves.
    with released as materialized (
        select exo_private.released_keys(bridge) as keys
    ), closed as materialized (
        select k.chunk_id, k.withheld from exo_private.closed_chunks(bridge) k
    )
    select m.entity_id, e.workspace, m.document_id, m.chunk_id, m.window_id, m.surface,
           case when m.chunk_id is null
                then exo_private.window_withheld(m.window_id, r.keys)
                else coalesce(k.withheld, '{}') end
    from released r
    cross join exo_private.entities e
    join exo_private.mentions m on m.entity_id = e.id
    left join closed k on k.chunk_id = m.chunk_id
    where e.id = any (ids)
      and (in_document is null or m.document_id = in_document)
$$;
comment on function exo_private.entity_mentions(bigint[], text[], bigint) is
    'Every mention of the given entities (only those in document in_document when it is given) with '
    'its workspace, document, chunk, window and surface, and withheld: the charged subjects the '
    'bridge leaves closed (empty: it may be shown).';

-- exo_private.entity_only_archival: whether every mention of an entity a search may show is archival.
create or replace function exo_private.entity_only_archival(p_entity bigint, p_released text[], p_as_of date)
returns boolean
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- What the search withholds counts on neither side (p_released as the stages take it). The
    -- first present mention ends the search for one: a person in today's chats costs little.
    with shown as (
        select c.band
        from exo_private.entities e
        join exo_private.mentions m on m.entity_id = e.id
        join exo_private.chunks c on c.workspace = e.workspace and c.id = m.chunk_id
        where e.id = p_entity
          and (p_as_of is null or c.written_at is null or c.written_at <= p_as_of)
          and (c.charged_subjects = '{}' or p_released is null
               or exo_private.unreleased(c.charged_subjects, p_released) = '{}')
    )
    select not exists (select 1 from shown where band <> 'archival')
       and exists (select 1 from shown where band = 'archival')
$$;
comment on function exo_private.entity_only_archival(bigint, text[], date) is
    'Whether the chunks that mention entity p_entity, written by p_as_of (null: any day), are all '
    'archival, and there is one: a chunk charged for a subject p_released does not release (null: '
    'every one released, as the search stages take it) counts on neither side.';

-- exo_private.mention_state: whether an entity's mentions in one window may be shown.
create or replace function exo_private.mention_state(p_entity bigint, p_window bigint, released text[])
returns text[]
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- '{}': some mention may be shown; else the closed subjects that withhold them all; null:
    -- the entity has no mention in the window. A relation is shown only when both of its
    -- ends are shown in its window (exo.dossier, exo.related).
    with x as (
        select case when m.chunk_id is null
                    then exo_private.window_withheld(m.window_id, released)
                    else exo_private.unreleased(c.charged_subjects, released) end as held
        from exo_private.mentions m
        join exo_private.entities e on e.id = m.entity_id
        left join exo_private.chunks c on c.workspace = e.workspace and c.id = m.chunk_id
        where m.entity_id = p_entity and m.window_id = p_window
    )
    select case when not exists (select 1 from x) then null
                when exists (select 1 from x where x.held = '{}') then '{}'::text[]
                else (select array_agg(distinct s order by s) from x cross join lateral unnest(x.held) s) end
$$;
comment on function exo_private.mention_state(bigint, bigint, text[]) is
    'Whether the mentions of an entity in an extraction window may be shown to a caller whose '
    'bridge opens released (exo_private.released_keys): {} when one may, else the closed subjects '
    'that withhold them all; null when the entity has no mention there.';

-- exo_private.written_by: whether a chunk (else its document) was written by as_of.
create or replace function exo_private.written_by(p_document_id bigint, p_chunk_id bigint, p_as_of timestamptz)
returns boolean
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    select coalesce(
        (select c.written_at from exo_private.chunks c where c.id = p_chunk_id),
        (select d.written_at from exo_private.documents d where d.id = p_document_id)
    ) <= p_as_of::date
$$;
comment on function exo_private.written_by(bigint, bigint, timestamptz) is
    'Whether the chunk p_chunk_id (else, without a chunk or its day, the document p_document_id) '
    'was written on or before the day of p_as_of; null (never true) when undated.';

-- exo_private.entity_evidence: what of each entity a bridge lets a caller see.
create or replace function exo_private.entity_evidence(ids bigint[], bridge text[], p_as_of timestamptz)
returns table (entity_id bigint, mentions bigint, documents bigint, withheld text[])
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- An entity is closed when it is a deferred subject the bridge leaves closed (by name or
    -- alias), or when every mention of it is withheld: its only evidence is charged material.
    -- One never mentioned (the owner) stays open.
    with closed as materialized (
        select k.subject, k.key from exo_private.closed_subject_keys(bridge) k
    ), ents as materialized (
        select e.id,
               (select array_agg(distinct c.subject order by c.subject) from closed c
                where c.key = e.canonical_key) as itself
        from exo_private.entities e
        where e.id = any (ids)
    ), ms as materialized (
        select m.entity_id, m.document_id, m.withheld
        from exo_private.entity_mentions(array(select x.id from ents x where x.itself is null), bridge) m
        where p_as_of is null or exo_private.written_by(m.document_id, m.chunk_id, p_as_of)
    ), counted as (
        select m.entity_id,
               count(*) filter (where m.withheld = '{}') as shown,
               count(distinct m.document_id) filter (where m.withheld = '{}') as documents
        from ms m
        group by m.entity_id
    ), held as (
        select m.entity_id, array_agg(distinct s order by s) as subjects
        from ms m
        cross join lateral unnest(m.withheld) s
        group by m.entity_id
    )
    select e.id, coalesce(k.shown, 0), coalesce(k.documents, 0),
           case when e.itself is not null then e.itself
                when k.shown = 0 then h.subjects
                else '{}'::text[] end
    from ents e
    left join counted k on k.entity_id = e.id
    left join held h on h.entity_id = e.id
$$;
comment on function exo_private.entity_evidence(bigint[], text[], timestamptz) is
    'For each of the given entities: mentions and documents (distinct) that may be shown, written by '
    'p_as_of (null: any day; exo_private.written_by), and '
    'withheld: {} when the entity may be shown, else the closed subjects why: it is a deferred '
    'subject the bridge leaves closed (by canonical key of its name or an alias; then no mention '
    'counts), or every mention of it is withheld (its only evidence is charged material). The graph '
    'API computes its answers over the open ones.';

-- exo_private.entities_shown: which of some entities a bridge lets a search name.
create or replace function exo_private.entities_shown(ids bigint[], bridge text[])
returns setof bigint
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- entity_evidence's withheld = '{}' without counting: not a deferred subject the bridge leaves
    -- closed, and never mentioned (the owner) or mentioned once where it may be shown. The first
    -- mention that may be shown ends the look, so a hub of a hundred thousand mentions costs a probe
    -- or two, not a count of them all (and not a read of every charged chunk).
    with released as materialized (
        select exo_private.released_keys(bridge) as keys
    ), closed as materialized (
        select k.key from exo_private.closed_subject_keys(bridge) k
    )
    select e.id
    from exo_private.entities e
    cross join released r
    where e.id = any (ids)
      and not exists (select 1 from closed c where c.key = e.canonical_key)
      and (not exists (select 1 from exo_private.mentions m where m.entity_id = e.id)
           or exists (
               select 1 from exo_private.mentions m
               left join exo_private.chunks c on c.workspace = e.workspace and c.id = m.chunk_id
               where m.entity_id = e.id
                 and case when m.chunk_id is null then exo_private.window_withheld(m.window_id, r.keys) = '{}'
                          else exo_private.unreleased(c.charged_subjects, r.keys) = '{}' end))
$$;
comment on function exo_private.entities_shown(bigint[], text[]) is
    'The ids among the given entities that the bridge leaves open: exo_private.entity_evidence''s '
    'withheld = ''{}'' (not a closed deferred subject; never mentioned, or a mention that may be '
    'shown), decided at the first such mention: what a search may recognise in a question.';

-- exo_private.entities_nameable: which of some entities a caller who names one is answered about.
create or replace function exo_private.entities_nameable(ids bigint[], bridge text[])
returns bigint[]
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- An entity known only from withheld material is no entity to whoever names it: an answer
    -- other than "names no entity" would tell, one guess a call, which names withheld material
    -- holds (the oracle rule, docs/security.md). A closed subject's own entity is answered, as
    -- withheld: its names are the owner's deference list, which no withheld text decides.
    select array_agg(i.id order by i.ord)
    from unnest(ids) with ordinality i (id, ord)
    where i.id in (select exo_private.entities_shown(ids, bridge))
       or exists (
           select 1
           from exo_private.entities e
           join exo_private.closed_subject_keys(bridge) k on k.key = e.canonical_key
           where e.id = i.id)
$$;
comment on function exo_private.entities_nameable(bigint[], text[]) is
    'The given entities (in their order; null if none) that exo.dossier, related and timeline answer '
    'about when asked by name or id: those the bridge shows (exo_private.entities_shown) and the '
    'closed deferred subjects themselves. One known only from withheld material is left out, as if '
    'it did not exist.';

-- exo_private.closed_documents: the documents a bridge leaves closed, and why.
create or replace function exo_private.closed_documents(ids bigint[], bridge text[])
returns table (document_id bigint, withheld text[])
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- A charged document: its frontmatter charges a subject (chunks or not), or it has chunks
    -- and every one is withheld. A title or path that names a subject near a cue charges every
    -- chunk (plpy/deference.py heading), so such a document is one of these too. Its title and
    -- path are withheld wherever its text would be.
    with released as materialized (
        select exo_private.released_keys(bridge) as keys
    ), docs as (
        select d.id, d.workspace, d.frontmatter -> 'charged' as declared
        from exo_private.documents d
        where d.id = any (ids)
    ), declared as (
        -- a declared name that is a deferred subject's name or alias counts as that subject
        select dc.id,
               coalesce((select s.subject from exo_private.deferred_subjects s
                         where exo_private.canonical_key(n.name)
                               = any (array(select exo_private.canonical_key(a) from unnest(s.subject || s.aliases) a))
                         order by s.subject limit 1),
                        pg_catalog.btrim(n.name)) as subject
        from docs dc
        cross join lateral jsonb_array_elements_text(
            case jsonb_typeof(dc.declared) when 'array' then dc.declared
                                           when 'string' then jsonb_build_array(dc.declared)
                                           else '[]'::jsonb end) n (name)
        where pg_catalog.btrim(n.name) <> ''
    ), chunk_states as (
        select c.document_id, exo_private.unreleased(c.charged_subjects, r.keys) as held
        from docs dc
        join exo_private.chunks c on c.workspace = dc.workspace and c.document_id = dc.id
        cross join released r
    ), reasons as (
        select dl.id, u.subject
        from declared dl
        cross join released r
        cross join lateral unnest(exo_private.unreleased(array[dl.subject], r.keys)) u (subject)
        union all
        select cs.document_id, u.subject
        from chunk_states cs
        cross join lateral unnest(cs.held) u (subject)
        where not exists (select 1 from chunk_states x where x.document_id = cs.document_id and x.held = '{}')
    )
    select r.id, array_agg(distinct r.subject order by r.subject)
    from reasons r
    group by r.id
$$;
comment on function exo_private.closed_documents(bigint[], text[]) is
    'Of the given documents, the charged ones the bridge leaves closed, with the subjects why: the '
    'frontmatter charges a closed subject, or every chunk is withheld (a title or path naming a '
    'subject near a cue charges every chunk). The one rule for withholding a document''s title and '
    'path wherever they would appear.';

-- exo_private.closed_windows: the extraction windows that overlap a chunk a bridge leaves closed.
create or replace function exo_private.closed_windows(bridge text[])
returns table (window_id bigint)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- Only in these may a mention, and so a relation, be withheld: elsewhere all is shown.
    select distinct w.id
    from exo_private.closed_chunks(bridge) k
    join exo_private.extraction_windows w
      on w.workspace = k.workspace and w.document_id = k.document_id
     and k.char_start < w.char_end and k.char_end > w.char_start
$$;
comment on function exo_private.closed_windows(text[]) is
    'The extraction windows overlapping a chunk charged for a subject the bridge leaves closed: the '
    'only windows whose mentions and relations may be withheld (exo_private.mention_state says which).';
