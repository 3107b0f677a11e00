-- Entity identity: which entity a name is (merged_into, kept_apart, upsert_entity), merging one
-- window's extraction into entities / mentions / relations (merge_extraction), the owner entity,
-- and the corrections a person makes (merge, unmerge, split an alias, split a sense), each logged
-- so a rebuild replays it. The projection of entities into the AGE graphs is sql/300_graph.sql.

-- exo_private.merged_into: the logged merge that says which entity a key now is.
create or replace function exo_private.merged_into(p_workspace text, p_key text)
returns bigint
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    hop exo_private.entity_merge_log;
    found_id bigint;
    seen text[] := array[p_key];
begin
    -- A merged key's newest correction is its merge, unless a later split or an unmerge undid
    -- it; a merge into a key merged on again is followed (a cycle stops where it began).
    loop
        select * into hop
        from exo_private.entity_merge_log l
        where l.workspace = p_workspace and l.other_key = seen[cardinality(seen)] and l.undone_at is null
        order by l.id desc
        limit 1;
        exit when not found or hop.kind <> 'merge' or hop.kept_key is null or hop.kept_key = any (seen);
        found_id := hop.id;
        seen := seen || hop.kept_key;
    end loop;
    return found_id;
end
$$;
comment on function exo_private.merged_into(text, text) is
    'The id of the entity_merge_log row whose kept_key (and kept_name) key p_key of p_workspace '
    'now resolves to by a person''s merges (exo entity merge), followed from merge to merge; null '
    'when its newest correction is none, a split or an undone merge. Entity ids change with each '
    'extraction generation; keys do not, so this is how a merge outlives one.';

-- exo_private.kept_apart: whether a person split a name off an entity.
create or replace function exo_private.kept_apart(p_workspace text, p_alias_key text, p_entity_key text)
returns boolean
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    select coalesce((select l.kind = 'split'
                     from exo_private.entity_merge_log l
                     where l.workspace = p_workspace and l.other_key = p_alias_key
                       and l.kept_key = p_entity_key and l.undone_at is null
                     order by l.id desc
                     limit 1), false)
$$;
comment on function exo_private.kept_apart(text, text, text) is
    'True when the newest correction between name p_alias_key and entity key p_entity_key of '
    'p_workspace is a split (exo entity split): the name is never that entity''s alias again, in this '
    'extraction generation or a later one; a merge of the two made after it makes this false.';

-- exo_private.add_counts: two objects of counts summed key by key.
create or replace function exo_private.add_counts(a jsonb, b jsonb)
returns jsonb
language sql immutable parallel safe
security invoker
set search_path = exo_private, pg_temp
as $$
    select coalesce(jsonb_object_agg(k.key, k.n), '{}')
    from (select x.key, sum(x.value::numeric) as n
          from (select * from jsonb_each(a) union all select * from jsonb_each(b)) x
          group by x.key) k
$$;
comment on function exo_private.add_counts(jsonb, jsonb) is
    'Two JSON objects of counts ({"Place": 2}) summed key by key: an entity''s type_votes and '
    'type_cues, and the cues a window adds to them.';

-- exo_private.upsert_entity: the one place an entity is created; a type conflict is decided by evidence.
create or replace function exo_private.upsert_entity(
    p_workspace text, p_generation int, p_type text, p_key text, p_name text,
    p_is_owner boolean default false, p_sense text default '', p_cues jsonb default '{}'
)
returns bigint
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    cue text;
    ent record;
    kept record;
    kept_id bigint;
    chosen exo_private.entity_type;
begin
    if p_key is null or pg_catalog.btrim(p_key) = '' then
        perform exo_private.invalid_argument('p_key must name the entity (its canonical key), not be blank');
    end if;
    if p_name is null or pg_catalog.btrim(p_name) = '' then
        perform exo_private.invalid_argument('p_name must not be blank');
    end if;
    if p_type is null or not p_type = any(enum_range(null::exo_private.entity_type)::text[]) then
        perform exo_private.invalid_argument(
            'p_type must be one of ' || array_to_string(enum_range(null::exo_private.entity_type)::text[], ', ')
            || ', not ' || exo_private.quoted(p_type));
    end if;
    if jsonb_typeof(p_cues) is distinct from 'object' or exists (
            select 1 from jsonb_each(p_cues) c
            where not c.key = any(enum_range(null::exo_private.entity_type)::text[])
               or jsonb_typeof(c.value) <> 'number' or c.value::numeric < 0
               or c.value::numeric <> trunc(c.value::numeric)) then
        perform exo_private.invalid_argument(
            'p_cues must be an object of entity types and counts of mentions, such as {"Place": 2}, not '
            || coalesce(p_cues::text, 'null'));
    end if;
    if p_sense is null or p_sense <> '' and (coalesce(p_is_owner, false) or not exists (
            select 1 from exo_private.entity_senses s
            where s.workspace = p_workspace and s.canonical_key = p_key and s.sense = p_sense)) then
        perform exo_private.invalid_argument(format(
            'p_sense: %s is no sense of %s in workspace %s (exo_private.entity_senses)%s',
            exo_private.quoted(p_sense), exo_private.quoted(p_key), p_workspace,
            case when p_is_owner then '; the owner is the name''s first sense' else '' end));
    end if;
    -- A second thing sharing a name is only ever itself: merges and aliases are of a name's
    -- first sense.
    if p_sense <> '' then
        insert into exo_private.entities as e
            (workspace, generation, type, canonical_key, sense, name, type_votes, type_cues)
        values (p_workspace, p_generation,
                coalesce((select s.anchor from exo_private.entity_senses s
                          where s.workspace = p_workspace and s.canonical_key = p_key and s.sense = p_sense
                            and s.anchor_kind = 'type'
                          limit 1), p_type)::exo_private.entity_type,
                p_key, p_sense, pg_catalog.btrim(p_name), jsonb_build_object(p_type, 1),
                exo_private.add_counts('{}', p_cues))
        on conflict (workspace, generation, canonical_key, sense) do update
            set type_votes = e.type_votes
                    || jsonb_build_object(p_type, coalesce((e.type_votes ->> p_type)::int, 0) + 1),
                type_cues = exo_private.add_counts(e.type_cues, p_cues)
        returning e.id into kept_id;
        return kept_id;
    end if;
    -- A key a person merged into another (exo entity merge) is that entity, in this generation
    -- or a later one: found or made under the kept key and name, the merged name its manual alias.
    if not coalesce(p_is_owner, false) then
        select l.kept_key, l.kept_name into kept
        from exo_private.entity_merge_log l
        where l.id = exo_private.merged_into(p_workspace, p_key);
        if found then
            kept_id := exo_private.upsert_entity(p_workspace, p_generation, p_type, kept.kept_key,
                                                 coalesce(kept.kept_name, kept.kept_key), p_cues => p_cues);
            insert into exo_private.entity_aliases (entity_id, alias_key, surface, how)
            values (kept_id, p_key, pg_catalog.btrim(p_name), 'manual')
            on conflict (entity_id, alias_key) do nothing;
            return kept_id;
        end if;
    end if;
    -- A name that is no entity's key but another name of one (an alias) is that entity, unless
    -- a person split it off that entity (exo entity split).
    if not coalesce(p_is_owner, false) and not exists (
        select 1 from exo_private.entities e
        where e.workspace = p_workspace and e.generation = p_generation and e.canonical_key = p_key
          and e.sense = ''
    ) then
        select min(a.entity_id) as id, count(distinct a.entity_id) as n into ent
        from exo_private.entity_aliases a
        join exo_private.entities e on e.id = a.entity_id
        where a.alias_key = p_key and e.workspace = p_workspace and e.generation = p_generation
          and not exo_private.kept_apart(p_workspace, p_key, e.canonical_key);
        if ent.n = 1 then
            return ent.id;
        end if;
    end if;

    -- Only a name of two or more words carries a cue (and one word skips the Python call).
    if pg_catalog.btrim(p_name) ~ '\s' then
        cue := exo_private.cue_type(p_name, p_type);
    end if;
    insert into exo_private.entities as e
        (workspace, generation, type, canonical_key, name, is_owner, type_votes, type_cues)
    values (p_workspace, p_generation,
            case when p_is_owner then 'Person' else coalesce(cue, p_type) end::exo_private.entity_type,
            p_key, pg_catalog.btrim(p_name), coalesce(p_is_owner, false), jsonb_build_object(p_type, 1),
            exo_private.add_counts('{}', p_cues))
    on conflict (workspace, generation, canonical_key, sense) do update
        set type_votes = e.type_votes
                || jsonb_build_object(p_type, coalesce((e.type_votes ->> p_type)::int, 0) + 1),
            type_cues = exo_private.add_counts(e.type_cues, p_cues),
            is_owner = e.is_owner or excluded.is_owner,
            name = case when excluded.is_owner then excluded.name else e.name end
    returning e.id, e.type, e.is_owner, e.type_votes, e.type_cues into ent;

    -- The type: the owner is a Person; else the name's cue; else the type with most votes (a
    -- window's one each) and cues (its mentions whose syntax typed the name) together, a tie
    -- keeping the current one, but never the type of another sense of the name: a model's guess
    -- in five windows ("Larkhaven" a person) gives way to four windows that place it by syntax.
    chosen := case
        when ent.is_owner then 'Person'
        when cue is not null then cue
        else coalesce((select v.key from jsonb_each_text(exo_private.add_counts(ent.type_votes, ent.type_cues)) v
                       where not exists (select 1 from exo_private.entity_senses s
                                         where s.workspace = p_workspace and s.canonical_key = p_key
                                           and s.anchor_kind = 'type' and s.anchor = v.key)
                       order by v.value::int desc, (v.key = ent.type::text) desc, v.key
                       limit 1), ent.type::text)
    end::exo_private.entity_type;
    if chosen <> ent.type then
        perform exo_private.unproject_entities(array[ent.id]);
        update exo_private.entities e set type = chosen where e.id = ent.id;
        perform exo_private.reproject_entities(array[ent.id]);
    end if;
    return ent.id;
end
$$;
comment on function exo_private.upsert_entity(text, int, text, text, text, boolean, text, jsonb) is
    'The entity of canonical key p_key and sense p_sense (exo_private.entity_sense; '''' unless '
    'entity_senses says the name means two things) in generation p_generation of p_workspace, '
    'created when missing (named p_name), the one place entities are made: one entity per key and '
    'sense whatever the type. A second sense is itself (its type the type anchor''s, if any); for '
    'the first: a key a person merged into another (exo_private.merged_into, any generation) gives the '
    'kept key''s entity (made when missing) and becomes its manual alias; a key that is no entity''s '
    'but an alias of exactly one (entity_aliases) not split off it (kept_apart) gives that entity. '
    'p_type is one vote (type_votes), and p_cues ({type: count}: the mentions of the window whose '
    'syntax typed the name) add to it (type_cues); the type is Person for the owner (p_is_owner), '
    'else the name''s cue (cue_type), else the type with most votes and cues together that is no '
    'other sense''s type anchor; a changed type is re-projected. Returns the entity id; raises '
    'invalid_parameter_value for a blank key or name, an unknown type, cues that are no counts by '
    'type, or a sense entity_senses does not hold.';

-- exo_private.merge_window_entities: merge_extraction's entities, in the order the model gave them.
create or replace function exo_private.merge_window_entities(
    p_window_id bigint, p_workspace text, p_document_id bigint, p_generation int, p_entities jsonb,
    names text[], keys text[],
    out ent_ids bigint[], out ent_keys text[], out ent_names text[]
)
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    item record;
    ent_id bigint;
    ent_sense text;
begin
    ent_ids := '{}'; ent_keys := '{}'; ent_names := '{}';
    for item in
        select k.name, k.key, x.item ->> 'type' as type, x.item -> 'aliases' as aliases,
               coalesce(x.item -> 'cues', '{}') as cues
        from (select distinct on (k.key) x.item, x.ord, k.key
              from jsonb_array_elements(coalesce(p_entities, '[]')) with ordinality x(item, ord)
              join unnest(names, keys) k(name, key) on k.name = pg_catalog.btrim(x.item ->> 'name')
              order by k.key, x.ord) x
        join unnest(names, keys) k(name, key) on k.key = x.key and k.name = pg_catalog.btrim(x.item ->> 'name')
        order by x.ord
    loop
        ent_sense := exo_private.entity_sense(p_workspace, item.key, item.type, p_document_id);
        ent_id := exo_private.upsert_entity(p_workspace, p_generation, item.type, item.key, item.name, false,
                                            ent_sense, item.cues);
        ent_ids := ent_ids || ent_id;
        ent_keys := ent_keys || item.key;
        ent_names := ent_names || item.name;
        insert into exo_private.entity_aliases (entity_id, alias_key, surface, window_id, how)
        select ent_id, a.key, a.surface, p_window_id, a.how
        from (select pg_catalog.btrim(y.alias ->> 'surface') as surface, y.alias ->> 'how' as how,
                     exo_private.canonical_key(y.alias ->> 'surface') as key
              from jsonb_array_elements(case when jsonb_typeof(item.aliases) = 'array'
                                             then item.aliases else '[]' end) y(alias)) a
        where a.key is not null and a.key <> item.key and a.how in ('surname', 'first_name') and ent_sense = ''
          and not exo_private.kept_apart(p_workspace, a.key,
                                         (select e.canonical_key from exo_private.entities e where e.id = ent_id))
        on conflict do nothing;
    end loop;
end
$$;
comment on function exo_private.merge_window_entities(bigint, text, bigint, int, jsonb, text[], text[]) is
    'merge_extraction''s entities: each key once, in the order the model gave them, made or found by '
    'upsert_entity (its sense from entity_sense; its cues, the mentions whose syntax typed it, weigh '
    'its type), and the aliases the worker resolved in the window '
    '({surface, how: surname|first_name}) recorded with the window as evidence. Returns the entity '
    'ids, keys and names in that order (names and keys: every name of the extraction, keyed).';

-- exo_private.merge_window_mentions: merge_extraction's mentions.
create or replace function exo_private.merge_window_mentions(
    p_window_id bigint, p_workspace text, p_document_id bigint, p_char_start int, p_char_end int,
    ent_ids bigint[], ent_names text[]
)
returns int
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    n_mentions int;
begin
    with chunk_text as materialized (
        select c.id, pg_catalog.lower(pg_catalog.regexp_replace(c.body, '\s+', ' ', 'g')) as body
        from exo_private.chunks c
        where c.workspace = p_workspace and c.document_id = p_document_id
          and c.char_start < p_char_end and c.char_end > p_char_start
    ), ents as (
        select distinct on (u.id) u.id, u.name,
               pg_catalog.lower(pg_catalog.regexp_replace(u.name, '\s+', ' ', 'g')) as needle
        from unnest(ent_ids, ent_names) with ordinality u(id, name, ord)
        order by u.id, u.ord
    ), found as (
        select ents.id, ents.name, chunk_text.id as chunk_id
        from ents join chunk_text on pg_catalog.strpos(chunk_text.body, ents.needle) > 0
    ), inserted as (
        insert into exo_private.mentions (entity_id, window_id, document_id, chunk_id, surface)
        select found.id, p_window_id, p_document_id, found.chunk_id, found.name from found
        union all
        select ents.id, p_window_id, p_document_id, null, ents.name
        from ents where not exists (select 1 from found where found.id = ents.id)
        on conflict do nothing
        returning 1
    )
    select count(*) into n_mentions from inserted;
    return n_mentions;
end
$$;
comment on function exo_private.merge_window_mentions(bigint, text, bigint, int, int, bigint[], text[]) is
    'merge_extraction''s mentions: for each entity, the chunks of the window''s span that contain its '
    'name (case and whitespace ignored), or one mention without a chunk when none does. Returns how '
    'many were new.';

-- exo_private.merge_window_relations: merge_extraction's relations.
create or replace function exo_private.merge_window_relations(
    p_window_id bigint, p_workspace text, p_document_id bigint, p_generation int, p_relations jsonb,
    names text[], keys text[], ent_ids bigint[], ent_keys text[]
)
returns bigint[]
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    rel_ids bigint[];
begin
    with rels as (
        select pg_catalog.btrim(x.item ->> 'subject') as subject,
               pg_catalog.btrim(x.item ->> 'object') as object,
               coalesce(pg_catalog.btrim(x.item ->> 'predicate'), '') as predicate_raw
        from jsonb_array_elements(coalesce(p_relations, '[]')) x(item)
    ), resolved as (
        select (select u.id from unnest(ent_ids, ent_keys) with ordinality u(id, key, ord)
                 where u.key = sk.key order by u.ord limit 1) as subject_id,
               (select u.id from unnest(ent_ids, ent_keys) with ordinality u(id, key, ord)
                 where u.key = ok.key order by u.ord limit 1) as object_id,
               rels.predicate_raw
        from rels
        join unnest(names, keys) sk(name, key) on sk.name = rels.subject
        join unnest(names, keys) ok(name, key) on ok.name = rels.object
    ), inserted as (
        insert into exo_private.relations
            (workspace, generation, subject_id, object_id, predicate_raw, predicate, window_id, document_id)
        select p_workspace, p_generation, r.subject_id, r.object_id, r.predicate_raw,
               exo_private.normalise_predicate(r.predicate_raw), p_window_id, p_document_id
        from resolved r
        where r.subject_id is not null and r.object_id is not null and r.subject_id <> r.object_id
        on conflict do nothing
        returning exo_private.relations.id
    )
    select coalesce(array_agg(inserted.id), '{}') into rel_ids from inserted;
    return rel_ids;
end
$$;
comment on function exo_private.merge_window_relations(bigint, text, bigint, int, jsonb, text[], text[], bigint[], text[]) is
    'merge_extraction''s relations: subject and object resolved by key through the extraction''s '
    'entities; unknown names and self-loops (two names of one entity) skipped. Returns the new '
    'relations'' ids.';

-- exo_private.absorb_first_names: a person's first name that became an entity of its own.
create or replace function exo_private.absorb_first_names(p_workspace text, ent_ids bigint[])
returns int
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    stray record;
    n_absorbed int := 0;
begin
    for stray in
        select distinct on (s.id) s.id as stray_id, a.entity_id as keep_id
        from exo_private.entity_aliases a
        join exo_private.entities p on p.id = a.entity_id
        join exo_private.entities s
          on s.workspace = p.workspace and s.generation = p.generation and s.canonical_key = a.alias_key
         and s.sense = '' and s.id <> p.id
        where a.entity_id = any (ent_ids) and a.how = 'first_name' and p.sense = ''
          and s.type = 'Person' and not s.is_owner
          and not exo_private.kept_apart(p_workspace, a.alias_key, p.canonical_key)
          and not exists (select 1 from exo_private.entity_aliases o
                          join exo_private.entities oe on oe.id = o.entity_id
                          where o.alias_key = a.alias_key and o.entity_id <> a.entity_id
                            and oe.workspace = p.workspace and oe.generation = p.generation)
        order by s.id, a.entity_id
    loop
        perform 1 from exo_private.entities e where e.id in (stray.keep_id, stray.stray_id) order by e.id for update;
        perform exo_private.move_entity_rows(stray.keep_id, stray.stray_id);
        n_absorbed := n_absorbed + 1;
    end loop;
    return n_absorbed;
end
$$;
comment on function exo_private.absorb_first_names(text, bigint[]) is
    'A first name shown to be one of these entities'' people''s (their alias, from this window or an '
    'earlier one) that is an entity of its own, made by a window that named only it, is that '
    'person: later windows resolve the name so (upsert_entity), and the earlier one is made to '
    'agree (move_entity_rows), whatever order they came in. Unless another person has that first '
    'name too, or a person split it off. Returns how many were absorbed.';

-- exo_private.merge_window_attributes: merge_extraction's attributes, as extracted facts.
create or replace function exo_private.merge_window_attributes(
    p_workspace text, p_document_id bigint, p_char_start int, p_char_end int, p_attributes jsonb,
    out recorded int, out undated int, out skipped int
)
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    attr record;
begin
    recorded := 0; undated := 0; skipped := 0;
    for attr in
        select exo_private.attribute_subject(x.item ->> 'subject', p_document_id) as subject,
               x.item ->> 'attribute' as attribute,
               x.item ->> 'value' as value, src.id as chunk_id,
               exo_private.evidence_valid_from(p_workspace, p_document_id, src.id) as valid_from
        from jsonb_array_elements(coalesce(p_attributes, '[]')) with ordinality x(item, ord)
        left join lateral (
            select c.id
            from exo_private.chunks c
            where c.workspace = p_workspace and c.document_id = p_document_id
              and c.char_start < p_char_end and c.char_end > p_char_start
            order by pg_catalog.strpos(pg_catalog.lower(pg_catalog.regexp_replace(c.body, '\s+', ' ', 'g')),
                                       pg_catalog.lower(x.item ->> 'value')) = 0,
                     c.ordinal
            limit 1
        ) src on true
        order by x.ord
    loop
        if attr.valid_from is null then
            undated := undated + 1;
            continue;
        end if;
        if exo_private.fact_refusal(attr.subject, attr.attribute, attr.value) is not null then
            skipped := skipped + 1;  -- "I" of no one known, a subject over 500 characters, ...
            continue;
        end if;
        perform exo_private.record_fact(
            p_workspace, attr.subject, attr.attribute, attr.value, 'extracted', attr.valid_from,
            jsonb_strip_nulls(jsonb_build_object('document_id', p_document_id, 'chunk_id', attr.chunk_id)));
        recorded := recorded + 1;
    end loop;
end
$$;
comment on function exo_private.merge_window_attributes(text, bigint, int, int, jsonb) is
    'merge_extraction''s attributes {subject, attribute, value}: facts of kind extracted (record_fact '
    'closes the row a new value replaces), each sourced by the window''s first chunk that has its '
    'value (else its first chunk) and dated when that source says it held (evidence_valid_from). '
    'Returns how many were recorded, undated (nothing recorded) and skipped (fact_refusal).';

-- exo_private.accept_extraction: what is kept of an extraction of one window, by the worker's rules.
create or replace function exo_private.accept_extraction(
    window_text text, entities jsonb, relations jsonb, attributes jsonb,
    max_entities int, max_relations int, ner jsonb default null
)
returns jsonb
language plpython3u immutable parallel safe
security invoker
set search_path = exo_private, pg_temp
as $$
# exo:include extraction_acceptance
import json
data = {key: json.loads(value) if value else [] for key, value in
        (("entities", entities), ("relations", relations), ("attributes", attributes))}
kept = accept(data, window_text or "", max_entities, max_relations, json.loads(ner) if ner else None)
return json.dumps({**kept.kept(), "dropped": dict(kept.dropped), "recovered": dict(kept.recovered)})
$$;
comment on function exo_private.accept_extraction(text, jsonb, jsonb, jsonb, int, int, jsonb) is
    'What is kept of an extraction of window_text: {entities, relations, attributes, dropped, '
    'recovered}. Each item checked on its own (plpy/extraction_acceptance.py, which the worker runs '
    'too): entities well formed, names that look like names, grounded in the window as written, '
    'types checked by cue words and ner (folded key -> type) and each key once; one-word names of '
    'one person made their alias; relation ends resolved to the entities or grounded; attributes '
    'with a grounded subject and value; at most max_entities entities and max_relations relations '
    'and attributes. dropped and recovered count by reason.';

-- exo_private.merge_extraction: merge one window's validated extraction.
create or replace function exo_private.merge_extraction(
    p_window_id bigint, p_generation int, p_entities jsonb, p_relations jsonb,
    p_attributes jsonb default '[]', p_ner jsonb default null
)
returns jsonb
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    win record;
    kept jsonb;
    names text[];
    keys text[];
    ents record;
    new_ids bigint[];
    rel_ids bigint[];
    n_mentions int;
    n_absorbed int;
    facts record;
begin
    select w.id, w.workspace, w.document_id, w.char_start, w.char_end, w.body into win
    from exo_private.extraction_windows w
    where w.id = p_window_id;
    if not found then
        raise exception 'extraction window % does not exist', p_window_id
            using hint = 'its document was re-chunked or deleted since the job was queued; drop the job';
    end if;

    -- A share lock on the generation: bump_generation (which locks it for update) waits
    -- for this merge, or this merge sees the newer generation and writes nothing.
    perform 1 from exo_private.extraction_generations g
    where g.workspace = win.workspace and g.generation = p_generation
    for share;
    if not found then
        raise exception 'generation % of workspace % does not exist', p_generation, win.workspace
            using hint = 'take it from exo_private.current_generation(workspace, model)';
    end if;
    if exists (select 1 from exo_private.extraction_generations g
               where g.workspace = win.workspace and g.generation > p_generation) then
        -- The model changed while this window was out; bump_generation queued it again.
        return jsonb_build_object('entities_new', 0, 'entities_seen', 0, 'mentions_new', 0,
                                  'relations_new', 0, 'stale_generation', true);
    end if;

    -- Every writer's extraction passes the worker's acceptance. The caps are twice the settings':
    -- the model's pass and the pattern pass each add up to extraction.max_entities/max_relations.
    kept := exo_private.accept_extraction(
        win.body, p_entities, p_relations, p_attributes,
        2 * (select (s.value #>> '{}')::int from exo_private.settings s where s.key = 'extraction.max_entities'),
        2 * (select (s.value #>> '{}')::int from exo_private.settings s where s.key = 'extraction.max_relations'),
        p_ner);

    -- Every distinct name (entities, subjects, objects) keyed once.
    with given as (
        select pg_catalog.btrim(x.item ->> 'name') as name
        from jsonb_array_elements(kept -> 'entities') x(item)
        union
        select pg_catalog.btrim(x.item ->> side)
        from jsonb_array_elements(kept -> 'relations') x(item),
             unnest(array['subject', 'object']) side
    ), keyed as materialized (
        select g.name, exo_private.canonical_key(g.name) as key
        from given g
        where g.name is not null
    )
    select array_agg(k.name), array_agg(k.key) into names, keys
    from keyed k
    where k.key is not null;

    ents := exo_private.merge_window_entities(win.id, win.workspace, win.document_id, p_generation,
                                              kept -> 'entities', names, keys);
    -- New: made by this merge, which gave each key one vote (a row a concurrent merge made
    -- while this one waited has that merge's vote too).
    select coalesce(array_agg(e.id), '{}') into new_ids
    from exo_private.entities e
    where e.id = any(ents.ent_ids) and e.canonical_key = any(keys)
      and (select sum(v.value::int) from jsonb_each_text(e.type_votes) v) = 1;
    n_mentions := exo_private.merge_window_mentions(win.id, win.workspace, win.document_id, win.char_start,
                                                    win.char_end, ents.ent_ids, ents.ent_names);
    rel_ids := exo_private.merge_window_relations(win.id, win.workspace, win.document_id, p_generation,
                                                  kept -> 'relations', names, keys, ents.ent_ids, ents.ent_keys);
    -- Before the projection: entity rows are locked before graph labels, as everywhere.
    n_absorbed := exo_private.absorb_first_names(win.workspace, ents.ent_ids);
    perform exo_private.project_entities(ents.ent_ids);
    perform exo_private.project_relations(rel_ids);
    facts := exo_private.merge_window_attributes(win.workspace, win.document_id, win.char_start, win.char_end,
                                                 kept -> 'attributes');
    return jsonb_build_object(
        'entities_new', cardinality(new_ids),
        'entities_absorbed', n_absorbed,
        'entities_seen', (select count(distinct x) from unnest(ents.ent_ids) x) - cardinality(new_ids),
        'mentions_new', n_mentions,
        'relations_new', cardinality(rel_ids),
        'facts_recorded', facts.recorded,
        'facts_undated', facts.undated,
        'facts_skipped', facts.skipped)
        || case when kept -> 'dropped' = '{}' then '{}' else jsonb_build_object('refused', kept -> 'dropped') end;
end
$$;
comment on function exo_private.merge_extraction(bigint, int, jsonb, jsonb, jsonb, jsonb) is
    'Merge what accept_extraction keeps of one window''s extraction (p_ner: an NER backend''s labels): entities through upsert_entity (one per key, type by '
    'evidence; an item''s aliases [{surface, how: surname|first_name}] recorded with the window as '
    'evidence), mentions in the window''s chunks that contain the name, relations between listed names; '
    'project them into the AGE graph; record each attribute {subject, attribute, value} as an '
    'extracted fact (record_fact), sourced by the window''s chunk that states the value and valid '
    'from when that source says it held (evidence_valid_from); an entity named by a first name '
    'that is one of the window''s people''s alone (their alias, how first_name) becomes that person '
    '(move_entity_rows). Idempotent. Returns {entities_new, entities_absorbed, '
    'entities_seen, mentions_new, relations_new, facts_recorded, facts_undated (attributes whose '
    'source has no date: not recorded), facts_skipped (refused by exo_private.fact_refusal, a '
    'first-person subject of no one known included: see exo_private.attribute_subject)} (plus stale_generation when a newer generation exists, '
    'having written nothing). Raises when the window is gone.';

-- exo_private.seed_owner: the owner's Person entity in the current generation of workspaces.
create or replace function exo_private.seed_owner(workspaces text[])
returns bigint[]
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    owner_name text;
    owner_key text;
    ids bigint[];
begin
    select p.display_name, p.entity_key into owner_name, owner_key
    from exo_private.people p
    where p.is_owner;
    if owner_key is null then
        return '{}'::bigint[];
    end if;
    -- A workspace without a generation gets generation 1 of model 'seed', which the first
    -- extraction model claims (current_generation).
    insert into exo_private.extraction_generations (workspace, generation, model)
    select w.name, 1, 'seed'
    from exo_private.workspaces w
    where w.name = any(workspaces)
      and not exists (select 1 from exo_private.extraction_generations g where g.workspace = w.name)
    on conflict do nothing;
    select coalesce(array_agg(exo_private.upsert_entity(g.workspace, g.generation, 'Person', owner_key,
                                                         owner_name, true) order by g.workspace), '{}')
      into ids
    from (select g.workspace, max(g.generation) as generation
          from exo_private.extraction_generations g
          where g.workspace = any(workspaces)
          group by g.workspace) g;
    return ids;
end
$$;
comment on function exo_private.seed_owner(text[]) is
    'Make the owner''s Person entity (key people.entity_key) exist, is_owner, named as the owner, '
    'in the current generation of the given workspaces (upsert_entity); returns those entities. '
    'Projection is the caller''s.';

-- exo_private.set_owner: name the owner and give them a Person entity in every workspace.
create or replace function exo_private.set_owner(display_name text)
returns void
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    owner_key text := exo_private.canonical_key(display_name);
    changed bigint[];
begin
    if owner_key is null then
        raise exception 'the owner''s name must not be blank';
    end if;
    update exo_private.people p
       set display_name = pg_catalog.btrim(set_owner.display_name), entity_key = owner_key
     where p.is_owner;
    if not found then
        raise exception 'there is no owner person'
            using hint = 'insert a row into exo_private.people with is_owner = true';
    end if;
    -- A renamed owner: their former entities are ordinary people now.
    with demoted as (
        update exo_private.entities e
           set is_owner = false
         where e.is_owner and e.canonical_key <> owner_key
        returning e.id
    )
    select coalesce(array_agg(demoted.id), '{}') into changed from demoted;
    changed := changed || exo_private.seed_owner(array(select w.name from exo_private.workspaces w));
    perform exo_private.project_entities(changed);
    -- The owner's chat windows now mention the owner's entity.
    perform exo_private.link_participants(array(
        select d.conversation_id from exo_private.documents d where d.conversation_id is not null));
    -- And the emails the owner's addresses wrote or received.
    perform exo_private.link_structure(array(select d.id from exo_private.documents d where d.metadata ? 'from'));
end
$$;
comment on function exo_private.set_owner(text) is
    'Name the owner: people''s owner row gets display_name and entity_key; every workspace''s '
    'current generation gets an is_owner Person entity for that key (generation 1 of model '
    '''seed'' where there is none), projected into its graph, and the owner''s chat windows and '
    'emails mention it (link_participants, link_structure). Extractions naming the owner merge into it.';

-- exo_private.move_entity_rows: one entity's rows become another's, and it goes.
create or replace function exo_private.move_entity_rows(p_keep bigint, p_other bigint)
returns void
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    perform exo_private.unproject_entities(array[p_keep, p_other]);
    -- A relation that would join p_keep to itself, or repeat one p_keep has, goes (merge_entities
    -- logs them as not moved by the same rule).
    delete from exo_private.relations r
     using (select o.id, case when o.subject_id = p_other then p_keep else o.subject_id end as subject_id,
                   case when o.object_id = p_other then p_keep else o.object_id end as object_id
            from exo_private.relations o
            where o.subject_id = p_other or o.object_id = p_other) x
     where r.id = x.id
       and (x.subject_id = x.object_id or exists (
               select 1 from exo_private.relations k
               where k.subject_id = x.subject_id and k.object_id = x.object_id
                 and k.predicate = r.predicate and k.window_id = r.window_id and k.id <> r.id));
    update exo_private.relations r
       set subject_id = case when r.subject_id = p_other then p_keep else r.subject_id end,
           object_id = case when r.object_id = p_other then p_keep else r.object_id end
     where r.subject_id = p_other or r.object_id = p_other;
    update exo_private.entity_aliases a
       set entity_id = p_keep
     where a.entity_id = p_other
       and not exists (select 1 from exo_private.entity_aliases k
                       where k.entity_id = p_keep and k.alias_key = a.alias_key);
    update exo_private.mentions m
       set entity_id = p_keep
     where m.entity_id = p_other
       and not exists (select 1 from exo_private.mentions k
                       where k.entity_id = p_keep and k.window_id = m.window_id
                         and k.chunk_id is not distinct from m.chunk_id);
    delete from exo_private.entities e where e.id = p_other;
    perform exo_private.reproject_entities(array[p_keep]);
end
$$;
comment on function exo_private.move_entity_rows(bigint, bigint) is
    'Entity p_other''s relations, aliases and mentions become p_keep''s (a relation that would join '
    'p_keep to itself or repeat one of its own, an alias or a mention p_keep has already, are '
    'dropped), p_other is deleted and p_keep re-projected. Unlogged: merge_entities logs a '
    'person''s merge around it; merge_extraction absorbs a first name shown to be a person''s.';

-- exo_private.merge_entities: a person's correction: two entities are one.
create or replace function exo_private.merge_entities(p_keep bigint, p_other bigint)
returns bigint
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    keep_row exo_private.entities;
    other_row exo_private.entities;
    moved jsonb;
    log_id bigint;
begin
    select * into keep_row from exo_private.entities e where e.id = p_keep for update;
    if not found then
        perform exo_private.invalid_argument(format('p_keep: there is no entity %s', p_keep));
    end if;
    select * into other_row from exo_private.entities e where e.id = p_other for update;
    if not found then
        perform exo_private.invalid_argument(format('p_other: there is no entity %s', p_other));
    end if;
    if p_keep = p_other then
        perform exo_private.invalid_argument('p_other must be another entity than p_keep');
    end if;
    if (keep_row.workspace, keep_row.generation) <> (other_row.workspace, other_row.generation) then
        perform exo_private.invalid_argument(format(
            'p_other: entity %s is in workspace %s generation %s, entity %s in %s generation %s; only '
            'entities of one graph merge', p_other, other_row.workspace, other_row.generation, p_keep,
            keep_row.workspace, keep_row.generation));
    end if;
    if other_row.is_owner then
        perform exo_private.invalid_argument(format(
            'p_other: entity %s is the owner, who stays: merge the other way round', p_other));
    end if;
    -- Merges are kept by name (they outlive a generation), so a name's second sense merges only
    -- back into its first, and then the name means one thing again.
    if keep_row.sense <> '' or other_row.sense <> '' then
        if keep_row.canonical_key <> other_row.canonical_key then
            perform exo_private.invalid_argument(format(
                'entity %s is the %s sense of %s: a second sense of a name merges only into that name''s first sense',
                case when keep_row.sense <> '' then p_keep else p_other end,
                exo_private.quoted(greatest(keep_row.sense, other_row.sense)),
                exo_private.quoted(case when keep_row.sense <> '' then keep_row.name else other_row.name end)));
        end if;
        if keep_row.sense <> '' then
            perform exo_private.invalid_argument(format(
                'p_keep: entity %s is the %s sense of %s: keep the first sense (merge the other way round)',
                p_keep, exo_private.quoted(keep_row.sense), exo_private.quoted(keep_row.name)));
        end if;
        delete from exo_private.entity_senses s
         where s.workspace = other_row.workspace and s.canonical_key = other_row.canonical_key
           and s.sense = other_row.sense;
    end if;

    -- What moves, as it was: the other entity, its mentions (moved: false where the kept
    -- entity already had one at that window and chunk, so it was dropped), its relations
    -- (moved: false for those that became a self-loop or a repeat) and its aliases.
    moved := jsonb_build_object(
        'entity', to_jsonb(other_row),
        'mentions', coalesce((
            select jsonb_agg(to_jsonb(m) || jsonb_build_object('moved', not exists (
                       select 1 from exo_private.mentions k
                       where k.entity_id = p_keep and k.window_id = m.window_id
                         and k.chunk_id is not distinct from m.chunk_id)))
            from exo_private.mentions m where m.entity_id = p_other), '[]'),
        'relations', coalesce((
            select jsonb_agg(to_jsonb(r) || jsonb_build_object('moved', not (
                       x.subject_id = x.object_id or exists (
                           select 1 from exo_private.relations o
                           where o.subject_id = x.subject_id and o.object_id = x.object_id
                             and o.predicate = r.predicate and o.window_id = r.window_id
                             and o.id <> r.id))))
            from exo_private.relations r
            cross join lateral (
                select case when r.subject_id = p_other then p_keep else r.subject_id end as subject_id,
                       case when r.object_id = p_other then p_keep else r.object_id end as object_id
            ) x
            where r.subject_id = p_other or r.object_id = p_other), '[]'),
        'aliases', coalesce((
            select jsonb_agg(to_jsonb(a)) from exo_private.entity_aliases a where a.entity_id = p_other), '[]'));

    insert into exo_private.entity_aliases (entity_id, alias_key, surface, how)
    select p_keep, other_row.canonical_key, other_row.name, 'manual'
    where other_row.canonical_key <> keep_row.canonical_key
    on conflict (entity_id, alias_key) do nothing;
    perform exo_private.move_entity_rows(p_keep, p_other);

    insert into exo_private.entity_merge_log (kind, workspace, kept_id, other_id, moved,
                                              kept_key, kept_name, other_key, other_name)
    values ('merge', keep_row.workspace, p_keep, p_other, moved,
            keep_row.canonical_key, keep_row.name, other_row.canonical_key, other_row.name)
    returning id into log_id;
    return log_id;
end
$$;
comment on function exo_private.merge_entities(bigint, bigint) is
    'Merge entity p_other into p_keep (same workspace and generation; the owner is never merged '
    'away): its mentions, relations and aliases move to p_keep (a mention p_keep already has at '
    'the same window and chunk, a relation that would join p_keep to itself or repeat one, are '
    'dropped), its name becomes a manual alias of p_keep, it is deleted and p_keep re-projected. '
    'Logged in entity_merge_log with everything that moved; returns the log id (unmerge_entities '
    'undoes it). A name''s second sense (entities.sense) merges only into its first, which drops '
    'the sense from entity_senses (the name means one thing again; split_sense makes it two).';

-- exo_private.unmerge_entities: undo a logged merge.
create or replace function exo_private.unmerge_entities(p_log_id bigint)
returns bigint
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    entry exo_private.entity_merge_log;
    other_id bigint;
    target_key text;
    target_id bigint;
    split_id bigint;
begin
    select * into entry from exo_private.entity_merge_log l where l.id = p_log_id for update;
    if not found or entry.kind <> 'merge' then
        perform exo_private.invalid_argument(format('p_log_id: %s is no logged merge', p_log_id),
            'exo entity log lists them; a split is undone by merging the entities again');
    end if;
    if entry.undone_at is not null then
        perform exo_private.invalid_argument(format('p_log_id: merge %s was undone already', p_log_id));
    end if;
    if entry.kept_key = entry.other_key then
        perform exo_private.invalid_argument(format(
            'p_log_id: merge %s joined two senses of the name %s', p_log_id, exo_private.quoted(entry.kept_name)),
            'split them again: exo entity split NAME --address ADDRESS or --type TYPE');
    end if;
    perform 1 from exo_private.entities e where e.id = entry.kept_id for update;
    if not found then
        -- The kept entity went with its generation; upsert_entity replayed the merge in the new
        -- one, where the merged name is an alias of the entity its key resolves to: that name is
        -- split off it (logged as a split, so later generations keep the two apart too).
        if entry.other_key is null then
            perform exo_private.invalid_argument(format(
                'p_log_id: entity %s of merge %s is gone and the merge was logged without its names'' '
                'keys; nothing to undo', entry.kept_id, p_log_id),
                'exo entity split the name off the entity it is on now');
        end if;
        select l.kept_key into target_key
        from exo_private.entity_merge_log l
        where l.id = exo_private.merged_into(entry.workspace, entry.other_key);
        update exo_private.entity_merge_log l set undone_at = now() where l.id = p_log_id;
        select e.id into other_id
        from exo_private.entities e
        where e.workspace = entry.workspace and e.canonical_key = entry.other_key and e.sense = ''
        order by e.generation desc
        limit 1;
        select e.id into target_id
        from exo_private.entities e
        where e.workspace = entry.workspace and e.canonical_key = target_key and e.sense = ''
        order by e.generation desc
        limit 1;
        if other_id is not null or target_id is null then
            return other_id;  -- apart already, or not extracted again yet
        end if;
        delete from exo_private.entity_aliases a
         where a.entity_id = target_id and a.alias_key = entry.other_key and a.how = 'manual';
        if not exists (select 1 from exo_private.mentions m
                       where m.entity_id = target_id and exo_private.canonical_key(m.surface) = entry.other_key) then
            return null;
        end if;
        split_id := exo_private.split_entity(target_id, coalesce(entry.other_name, entry.other_key));
        return (select l.other_id from exo_private.entity_merge_log l where l.id = split_id);
    end if;
    other_id := entry.other_id;
    if exists (select 1 from exo_private.entities e
               where e.workspace = entry.workspace and e.generation = (entry.moved -> 'entity' ->> 'generation')::int
                 and e.canonical_key = entry.moved -> 'entity' ->> 'canonical_key' and e.sense = '') then
        perform exo_private.invalid_argument(format(
            'p_log_id: an entity keyed %s exists again since merge %s; merge or split that one instead',
            exo_private.quoted(entry.moved -> 'entity' ->> 'canonical_key'), p_log_id));
    end if;

    perform exo_private.unproject_entities(array[entry.kept_id]);
    insert into exo_private.entities overriding system value
    select * from jsonb_populate_record(null::exo_private.entities, entry.moved -> 'entity');
    delete from exo_private.entity_aliases a
     where a.entity_id = entry.kept_id and a.how = 'manual'
       and a.alias_key = entry.moved -> 'entity' ->> 'canonical_key';
    -- Aliases, mentions and relations go back as they were: the moved rows are taken back, the
    -- dropped ones re-made.
    delete from exo_private.entity_aliases a
     where a.id in (select (x ->> 'id')::bigint from jsonb_array_elements(entry.moved -> 'aliases') x);
    insert into exo_private.entity_aliases overriding system value
    select a.id, a.entity_id, a.alias_key, a.surface,
           (select w.id from exo_private.extraction_windows w where w.id = a.window_id), a.how, a.created_at
    from jsonb_populate_recordset(null::exo_private.entity_aliases, entry.moved -> 'aliases') a;
    update exo_private.mentions m
       set entity_id = other_id
      from jsonb_array_elements(entry.moved -> 'mentions') x
     where (x ->> 'moved')::boolean and m.entity_id = entry.kept_id
       and m.window_id = (x ->> 'window_id')::bigint
       and m.chunk_id is not distinct from (x ->> 'chunk_id')::bigint;
    -- (Rows of windows re-made since, or of an entity gone since, stay gone.)
    insert into exo_private.mentions
    select m.* from jsonb_populate_recordset(null::exo_private.mentions,
        (select coalesce(jsonb_agg(x), '[]') from jsonb_array_elements(entry.moved -> 'mentions') x
         where not (x ->> 'moved')::boolean)) m
    where exists (select 1 from exo_private.extraction_windows w where w.id = m.window_id)
    on conflict do nothing;
    delete from exo_private.relations r
     where r.id in (select (x ->> 'id')::bigint from jsonb_array_elements(entry.moved -> 'relations') x);
    insert into exo_private.relations overriding system value
    select r.* from jsonb_populate_recordset(null::exo_private.relations, entry.moved -> 'relations') r
    where exists (select 1 from exo_private.extraction_windows w where w.id = r.window_id)
      and exists (select 1 from exo_private.entities e where e.id = r.subject_id)
      and exists (select 1 from exo_private.entities e where e.id = r.object_id);
    perform exo_private.reproject_entities(array[entry.kept_id, other_id]);
    update exo_private.entity_merge_log l set undone_at = now() where l.id = p_log_id;
    return other_id;
end
$$;
comment on function exo_private.unmerge_entities(bigint) is
    'Undo merge p_log_id of entity_merge_log: the merged entity comes back with its id, mentions, '
    'relations and aliases as they were, the manual alias goes, both are re-projected, and the log '
    'row is marked undone. Returns the restored entity id. When the kept entity went with its '
    'extraction generation (the merge replayed in the new one by upsert_entity), the merged name is '
    'split off the entity it is on now (split_entity, logged) and that entity''s id returned; null '
    'when the new generation has not extracted the name yet (its next extraction keeps it apart). '
    'Refuses a split, a merge undone already, or one whose key is an entity again.';

-- exo_private.split_entity: a person's correction: one of an entity's names is another entity.
create or replace function exo_private.split_entity(p_entity bigint, p_alias text)
returns bigint
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    ent exo_private.entities;
    wanted_key text := exo_private.canonical_key(p_alias);
    split_windows bigint[];
    new_id bigint;
    moved jsonb;
    log_id bigint;
begin
    select * into ent from exo_private.entities e where e.id = p_entity for update;
    if not found then
        perform exo_private.invalid_argument(format('p_entity: there is no entity %s', p_entity));
    end if;
    if wanted_key is null or wanted_key = ent.canonical_key then
        perform exo_private.invalid_argument(format(
            'p_alias: %s is not another name of entity %s (%s)', exo_private.quoted(p_alias), p_entity,
            exo_private.quoted(ent.name)));
    end if;
    if not exists (select 1 from exo_private.entity_aliases a where a.entity_id = p_entity and a.alias_key = wanted_key)
       and not exists (select 1 from exo_private.mentions m
                       where m.entity_id = p_entity and exo_private.canonical_key(m.surface) = wanted_key) then
        perform exo_private.invalid_argument(format(
            'p_alias: entity %s (%s) has no alias or mention named %s', p_entity, exo_private.quoted(ent.name),
            exo_private.quoted(p_alias)), 'exo entity aliases lists them');
    end if;

    -- The windows where the entity is named only by that alias: their relations at it move too.
    select coalesce(array_agg(distinct m.window_id), '{}') into split_windows
    from exo_private.mentions m
    where m.entity_id = p_entity and exo_private.canonical_key(m.surface) = wanted_key
      and not exists (select 1 from exo_private.mentions o
                      where o.entity_id = p_entity and o.window_id = m.window_id
                        and exo_private.canonical_key(o.surface) <> wanted_key);
    moved := jsonb_build_object(
        'aliases', coalesce((select jsonb_agg(to_jsonb(a)) from exo_private.entity_aliases a
                             where a.entity_id = p_entity and a.alias_key = wanted_key), '[]'),
        'mentions', coalesce((select jsonb_agg(to_jsonb(m)) from exo_private.mentions m
                              where m.entity_id = p_entity
                                and exo_private.canonical_key(m.surface) = wanted_key), '[]'),
        'relations', coalesce((select jsonb_agg(to_jsonb(r)) from exo_private.relations r
                               where (r.subject_id = p_entity or r.object_id = p_entity)
                                 and r.window_id = any(split_windows)), '[]'));
    -- The alias goes and the split is logged first, so that upsert_entity makes the name an
    -- entity of its own (a merge of it logged before no longer sends it back to p_entity).
    delete from exo_private.entity_aliases a where a.entity_id = p_entity and a.alias_key = wanted_key;
    insert into exo_private.entity_merge_log (kind, workspace, kept_id, other_id, moved,
                                              kept_key, kept_name, other_key, other_name)
    values ('split', ent.workspace, p_entity, p_entity, moved,
            ent.canonical_key, ent.name, wanted_key, pg_catalog.btrim(p_alias))
    returning id into log_id;
    new_id := exo_private.upsert_entity(ent.workspace, ent.generation, ent.type::text, wanted_key,
                                        pg_catalog.btrim(p_alias));
    update exo_private.entity_merge_log l set other_id = new_id where l.id = log_id;
    perform exo_private.unproject_entities(array[p_entity]);
    update exo_private.mentions m
       set entity_id = new_id
     where m.entity_id = p_entity and exo_private.canonical_key(m.surface) = wanted_key
       and not exists (select 1 from exo_private.mentions k
                       where k.entity_id = new_id and k.window_id = m.window_id
                         and k.chunk_id is not distinct from m.chunk_id);
    update exo_private.relations r
       set subject_id = case when r.subject_id = p_entity then new_id else r.subject_id end,
           object_id = case when r.object_id = p_entity then new_id else r.object_id end
     where (r.subject_id = p_entity or r.object_id = p_entity) and r.window_id = any(split_windows)
       and r.subject_id <> new_id and r.object_id <> new_id;
    perform exo_private.reproject_entities(array[p_entity, new_id]);
    return log_id;
end
$$;
comment on function exo_private.split_entity(bigint, text) is
    'Split name p_alias off entity p_entity: the alias row goes, the mentions written with that name '
    'move to an entity of that key (upsert_entity: made, of p_entity''s type, when missing), and so do '
    'the relations at p_entity in the windows that name it only so. Logged in entity_merge_log '
    '(kind split, other_id the new entity); returns the log id. Its inverse is merge_entities.';

-- exo_private.split_sense: a person's correction: a name means two things.
create or replace function exo_private.split_sense(p_entity bigint, p_anchor_kind text, p_anchor text)
returns bigint
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    ent exo_private.entities;
    anchor text := pg_catalog.btrim(p_anchor);
    label text;
    docs bigint[];
    conversations bigint[] := '{}'::bigint[];
    first_windows bigint[];
    new_id bigint;
begin
    select * into ent from exo_private.entities e where e.id = p_entity for update;
    if not found then
        perform exo_private.invalid_argument(format('p_entity: there is no entity %s', p_entity));
    end if;
    if ent.sense <> '' then
        perform exo_private.invalid_argument(format(
            'p_entity: entity %s is the %s sense of %s already; split from the name''s first sense',
            p_entity, exo_private.quoted(ent.sense), exo_private.quoted(ent.name)));
    end if;
    if p_anchor_kind = 'address' then
        anchor := pg_catalog.lower(anchor);
        -- the conversations (a mail archive's threads) where a sender of that address and name wrote
        conversations := array(
            select distinct d.conversation_id
            from exo_private.chat_identities i
            join exo_private.chat_participants p on p.identity_id = i.id
            join exo_private.documents d on d.conversation_id = p.conversation_id
            where pg_catalog.lower(i.handle) = anchor and d.workspace = ent.workspace
              and exo_private.canonical_key(i.display_name) = ent.canonical_key);
        if not exists (select 1 from exo_private.entity_addresses a
                       where a.workspace = ent.workspace and a.canonical_key = ent.canonical_key and a.address = anchor)
           and conversations = '{}' then
            perform exo_private.invalid_argument(format(
                'p_anchor: no email header or mail archive sender of workspace %s gives %s with address %s',
                ent.workspace, exo_private.quoted(ent.name), exo_private.quoted(p_anchor)));
        end if;
        if anchor = any (exo_private.owner_addresses()) then
            perform exo_private.invalid_argument(format('p_anchor: %s is an address of the owner', anchor));
        end if;
        label := anchor;
        -- the documents whose headers give the name so
        docs := array(select a.document_id from exo_private.entity_addresses a
                      where a.workspace = ent.workspace and a.canonical_key = ent.canonical_key and a.address = anchor);
    elsif p_anchor_kind = 'type' then
        if anchor is null or not anchor = any (enum_range(null::exo_private.entity_type)::text[]) then
            perform exo_private.invalid_argument(
                'p_anchor must be one of ' || array_to_string(enum_range(null::exo_private.entity_type)::text[], ', ')
                || ', not ' || exo_private.quoted(p_anchor));
        end if;
        if anchor = ent.type::text then
            perform exo_private.invalid_argument(format(
                'p_anchor: %s is a %s already; split off a type it is not', exo_private.quoted(ent.name), anchor));
        end if;
        label := pg_catalog.lower(anchor);
        -- the notes whose frontmatter names it (a key of graph.place_keys gives a Place)
        docs := array(select distinct m.document_id from exo_private.mentions m
                      join exo_private.documents d on d.id = m.document_id
                      where m.entity_id = p_entity and m.origin = 'structure'
                        and d.conversation_id is null and not d.metadata ? 'from');
    else
        perform exo_private.invalid_argument(format(
            'p_anchor_kind must be address or type, not %s', exo_private.quoted(p_anchor_kind)));
    end if;
    if exists (select 1 from exo_private.entity_senses s
               where s.workspace = ent.workspace and s.canonical_key = ent.canonical_key and s.sense = label) then
        perform exo_private.invalid_argument(format(
            'p_anchor: %s has a sense %s already', exo_private.quoted(ent.name), exo_private.quoted(label)));
    end if;

    insert into exo_private.entity_senses (workspace, canonical_key, sense, anchor_kind, anchor, how)
    values (ent.workspace, ent.canonical_key, label, p_anchor_kind, anchor, 'manual');
    new_id := exo_private.upsert_entity(ent.workspace, ent.generation,
                                        case when p_anchor_kind = 'type' then anchor else 'Person' end,
                                        ent.canonical_key, ent.name, false, label);
    -- What the model found in an address's documents is that correspondent's too (moved before
    -- the structure is read again, so that no entity is left without a mention meanwhile). A model
    -- mention keeps no type, so a type's model rows stay until the next generation reads them.
    if p_anchor_kind = 'address' then
        perform exo_private.unproject_entities(array[p_entity]);
        update exo_private.mentions m
           set entity_id = new_id
         where m.entity_id = p_entity and m.document_id = any(docs) and m.origin = 'model'
           and not exists (select 1 from exo_private.mentions k
                           where k.entity_id = new_id and k.window_id = m.window_id
                             and k.chunk_id is not distinct from m.chunk_id);
        delete from exo_private.mentions m
         where m.entity_id = p_entity and m.document_id = any(docs) and m.origin = 'model';
        update exo_private.relations r
           set subject_id = case when r.subject_id = p_entity then new_id else r.subject_id end,
               object_id = case when r.object_id = p_entity then new_id else r.object_id end
         where (r.subject_id = p_entity or r.object_id = p_entity) and r.document_id = any(docs)
           and r.origin = 'model' and r.subject_id <> new_id and r.object_id <> new_id;
        perform exo_private.reproject_entities(array[p_entity, new_id]);
    end if;
    perform exo_private.link_structure(docs);
    -- The threads' senders of that address are the new sense: linked again, then the first
    -- sense's rows of the windows where no sender of its own wrote go.
    if conversations <> '{}' then
        perform exo_private.link_participants(conversations);
        first_windows := array(select s.window_id from exo_private.chat_window_senders(conversations) s
                               where s.key = ent.canonical_key and s.sense = '');
        delete from exo_private.relations r
         where (r.subject_id = p_entity or r.object_id = p_entity) and r.origin = 'structure'
           and r.window_id in (select w.id from exo_private.extraction_windows w
                               join exo_private.documents d on d.id = w.document_id
                               where d.conversation_id = any(conversations))
           and not r.window_id = any (first_windows);
        delete from exo_private.mentions m
         where m.entity_id = p_entity and m.origin = 'structure'
           and m.document_id in (select d.id from exo_private.documents d where d.conversation_id = any(conversations))
           and not m.window_id = any (first_windows);
    end if;
    perform exo_private.project_entities(array[new_id]);
    return new_id;
end
$$;
comment on function exo_private.split_sense(bigint, text, text) is
    'A person''s correction: the name of entity p_entity (a name''s first sense) also means another '
    'thing, known by anchor p_anchor of kind p_anchor_kind: address (the headers that give the name '
    'with that address, and what the model found in their documents, move to it, and so does a mail '
    'archive''s sender of that address and name; not an owner''s address) or type (an entity type: the notes whose frontmatter names it so, and later extractions '
    'that type it so). Recorded in entity_senses (how manual; sense the address, or the type in lower '
    'case), so every later generation keeps the two apart. Returns the new sense''s entity id; '
    'merge_entities(p_entity, it) undoes it.';

-- exo_private.drop_unmentioned_entities: entities left without mentions go, with their vertices.
create or replace function exo_private.drop_unmentioned_entities()
returns trigger
language plpgsql
security definer
set search_path = ag_catalog, exo_private, pg_temp
as $$
declare
    orphans bigint[];
begin
    -- The owner's entity stands without mentions (seed_owner); every other one exists
    -- because a window mentions it. The candidates are locked first: a merge that is adding
    -- a mention of one holds it (the foreign key check) until it commits, and the count
    -- below, a statement later, sees that mention; a merge after the lock waits, then fails
    -- its foreign key check and its job is retried.
    perform 1
    from exo_private.entities e
    where e.id in (select distinct o.entity_id from old_mentions o) and not e.is_owner
    order by e.id
    for update;
    select coalesce(array_agg(e.id), '{}') into orphans
    from exo_private.entities e
    where e.id in (select distinct o.entity_id from old_mentions o)
      and not e.is_owner
      and not exists (select 1 from exo_private.mentions m where m.entity_id = e.id);
    if orphans = '{}' then
        return null;
    end if;
    -- Their vertices, and the edges at them, leave the AGE graph in the same transaction.
    perform exo_private.unproject_entities(orphans);
    -- Their relations go with them (on delete cascade).
    delete from exo_private.entities e where e.id = any(orphans);
    return null;
end
$$;
comment on function exo_private.drop_unmentioned_entities() is
    'Trigger after a delete from mentions (a window re-made, a document deleted or re-extracted): '
    'remove the entities, other than the owner, that no mention is left for, their relations, and '
    'their vertices and edges in the workspace''s AGE graph.';

create or replace trigger drop_unmentioned_entities
    after delete on exo_private.mentions
    referencing old table as old_mentions
    for each statement execute function exo_private.drop_unmentioned_entities();
