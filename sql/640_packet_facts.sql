-- The facts a context packet opens with: what is true of the people and things a question
-- names, as of the packet's day, every kind's current row (the packet ranks them by precedence
-- and shows disagreement; plpy/search.py fact_section).

-- exo_private.packet_facts: the facts valid at p_as_of of the subjects name keys name.
create or replace function exo_private.packet_facts(
    p_keys text[], p_as_of timestamptz, p_bridge text[], p_workspaces text[], p_owner boolean default false,
    p_max int default 20
)
returns table (
    ord bigint, fact_id bigint, workspace text, subject text, attribute text, kind text, value text,
    valid_from timestamptz, valid_to timestamptz, sources jsonb, withheld jsonb, previous_of bigint
)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- A subject is named by its whole key ("priya okafor"), by a form of it (an identifier
    -- however written: "ORTAND 88" names "order ortand-88", exo_private.key_forms) or, for a
    -- person, by the first word of it ("Priya"): the entities' partial index finds those, the
    -- facts' indexes the rest. A question in the first person (p_owner) names the owner, once
    -- `exo owner` has named them.
    with subjects as materialized (
        select k.key from unnest(p_keys) k (key)
        union
        select distinct f.subject_key from exo_private.facts f
        where exo_private.key_forms(f.subject_key) && array(
            select pg_catalog.regexp_replace(k.key, '[[:space:][:punct:]]+', '', 'g') from unnest(p_keys) k (key))
          and f.workspace = any (p_workspaces)
        union
        select p.entity_key from exo_private.people p where p_owner and p.is_owner and p.entity_key is not null
        union
        select e.canonical_key from exo_private.entities e
        where e.type = 'Person' and pg_catalog.split_part(e.canonical_key, ' ', 1) = any (p_keys)
          and e.workspace = any (p_workspaces)
    ), owned as materialized (
        -- a question not in the first person that names a thing of the owner's by the attribute
        -- it is kept under ("When is the daily standup?": standup)
        select f.id from exo_private.facts f
        where not p_owner
          and f.subject_key = (select p.entity_key from exo_private.people p where p.is_owner)
          and f.attribute = any (array(select pg_catalog.replace(k.key, ' ', '_') from unnest(p_keys) k (key)))
    ), ids as materialized (
        select array(
            select x.id from (
                select distinct on (f.subject_key, f.workspace, f.attribute, f.kind)
                       f.id, f.subject_key, f.attribute, f.kind
                from exo_private.facts f
                where f.id in (
                        select g.id from exo_private.facts g where g.subject_key in (select s.key from subjects s)
                        union all
                        select o.id from owned o)
                  and f.workspace = any (p_workspaces)
                  and f.valid_from <= p_as_of and (f.valid_to is null or f.valid_to > p_as_of)
                order by f.subject_key, f.workspace, f.attribute, f.kind, f.valid_from desc, f.id desc
            ) x
            order by x.subject_key, x.attribute, x.kind
            limit p_max) as list
    ), previous as materialized (
        -- each line's value before the one it holds then: what it was, and until when
        select p.id, c.id as previous_of
        from unnest((select i.list from ids i)) c (id)
        join exo_private.facts f on f.id = c.id
        cross join lateral (
            select g.id from exo_private.facts g
            where g.subject_key = f.subject_key and g.attribute = f.attribute and g.kind = f.kind
              and g.workspace = f.workspace and g.valid_from < f.valid_from and g.value <> f.value
            order by g.valid_from desc, g.id desc
            limit 1
        ) p
    )
    select x.ord, x.fact_id, x.workspace, x.subject, x.attribute, x.kind, x.value, x.valid_from, x.valid_to,
           x.sources, x.withheld, x.previous_of
    from (
        select 0 as part, s.ord, s.fact_id, s.workspace, s.subject, s.attribute, s.kind, s.value, s.valid_from,
               s.valid_to, s.sources, null::jsonb as withheld, p.previous_of
        from ids, exo_private.shown_facts(ids.list || array(select p.id from previous p), p_bridge) s
        left join previous p on p.id = s.fact_id
        union all
        -- a deferred subject the question names by a name or an alias (its own facts withheld);
        -- never the withheld facts among those of the subjects asked, which a guess could count
        select 1, row_number() over (order by h.subject), null, null, null, null, null, null, null, null, null,
               h.hint, null
        from exo_private.fact_hints(p_bridge) h
        where h.keys && p_keys
    ) x
    order by x.part, x.ord
$$;
comment on function exo_private.packet_facts(text[], timestamptz, text[], text[], boolean, int) is
    'The facts a context packet opens with: for the subjects p_keys name (canonical keys of the '
    'question''s words, also as exo_private.key_forms; a person also by the first word of their name; the owner when p_owner, a '
    'question in the first person; otherwise the owner''s lines whose attribute a key names, "book club" book_club), in p_workspaces, the row '
    'of every workspace, attribute and kind valid at p_as_of (at most p_max), as '
    'exo_private.shown_facts shows them to a caller with p_bridge (charged-only facts withheld; one '
    'last row, exo_private.fact_hints, per deferred subject left closed that p_keys name), and after them, for each, the row of its line before it (the '
    'latest with another value and an earlier valid_from), previous_of naming the row it preceded '
    '(null for the rows valid at p_as_of).';
