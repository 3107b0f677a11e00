-- Embeddings: one model's vectors per HNSW index, and the stages they advance.

-- exo_private.ensure_embedding_indexes: an HNSW index per workspace partition for one model.
create or replace function exo_private.ensure_embedding_indexes(p_model_id int)
returns void
language plpgsql
security definer
set search_path = exo_private, public, pg_temp
as $$
declare
    dims int;
    ws text;
    index_name text;
begin
    select m.dimensions into dims from exo_private.embedding_models m where m.id = p_model_id;
    if dims is null then
        raise exception 'embedding model % does not exist', p_model_id;
    end if;
    for ws in select w.name from exo_private.workspaces w loop
        perform exo_private.ensure_workspace_storage(ws);
        index_name := format('chunk_embeddings_%s_m%s_hnsw', ws, p_model_id);
        if to_regclass(format('exo_private.%I', index_name)) is null then
            -- A partial expression index: only this model's vectors, at its dimension.
            execute format(
                'create index %I on exo_private.%I using hnsw ((embedding::vector(%s)) vector_cosine_ops) '
                'where model_id = %s',
                index_name, 'chunk_embeddings_' || ws, dims, p_model_id);
        end if;
    end loop;
end
$$;
comment on function exo_private.ensure_embedding_indexes(int) is
    'Create the HNSW index of one embedding model in every workspace partition (partial: that model only).';

-- exo_private.embedding_model_id: the id of a model (name, dimensions), registering it once.
create or replace function exo_private.embedding_model_id(p_name text, p_dimensions int)
returns int
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    found_id int;
begin
    select m.id into found_id from exo_private.embedding_models m
    where m.name = p_name and m.dimensions = p_dimensions;
    if found_id is null then
        insert into exo_private.embedding_models (name, dimensions) values (p_name, p_dimensions)
        on conflict (name, dimensions) do nothing;
        select m.id into found_id from exo_private.embedding_models m
        where m.name = p_name and m.dimensions = p_dimensions;
        perform exo_private.ensure_embedding_indexes(found_id);
    end if;
    return found_id;
end
$$;
comment on function exo_private.embedding_model_id(text, int) is
    'Id of an embedding model by name and dimensions; a new model is registered and gets its indexes.';

-- exo_private.active_embedding_model: the model the settings name now (null before its first vector).
create or replace function exo_private.active_embedding_model()
returns int
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    select m.id
    from exo_private.settings s
    join exo_private.embedding_models m
      on m.name = s.value ->> 'model' and m.dimensions = (s.value ->> 'dimensions')::int
    where s.key = 'models.embeddings'
$$;
comment on function exo_private.active_embedding_model() is
    'Id of the embedding model named by the models.embeddings setting; null until it stored a vector '
    '(registering is done by store_embeddings and set_embedding_model, never inside a query).';

-- exo_private.checked_vectors_model: a batch of vectors checked against its ids and model.
create or replace function exo_private.checked_vectors_model(
    p_model text, p_dimensions int, p_what text, p_ids bigint[], p_vectors text[]
)
returns int
language plpgsql
security invoker
set search_path = exo_private, public, pg_temp
as $$
begin
    if cardinality(p_ids) <> cardinality(p_vectors) then
        raise exception '% % ids but % vectors', cardinality(p_ids), p_what, cardinality(p_vectors);
    end if;
    if exists (select 1 from unnest(p_vectors) v where vector_dims(v::vector) <> p_dimensions) then
        raise exception 'a vector does not have the % dimensions model % records', p_dimensions, p_model;
    end if;
    return exo_private.embedding_model_id(p_model, p_dimensions);
end
$$;
comment on function exo_private.checked_vectors_model(text, int, text, bigint[], text[]) is
    'The id of embedding model (p_model, p_dimensions), registering it once, after checking that there '
    'is one vector per id (p_what names the ids in the error) and that each has the model''s dimensions.';

-- exo_private.store_embeddings: write one batch of vectors from the worker.
create or replace function exo_private.store_embeddings(
    p_model text, p_dimensions int, p_chunk_ids bigint[], p_vectors text[]
)
returns int
language plpgsql
security invoker
set search_path = exo_private, public, pg_temp
as $$
declare
    model int := exo_private.checked_vectors_model(p_model, p_dimensions, 'chunk', p_chunk_ids, p_vectors);
    stored int;
begin
    -- Chunks re-made since the job was queued are gone; their vectors are dropped.
    insert into exo_private.chunk_embeddings (workspace, chunk_id, model_id, embedding)
    select c.workspace, c.id, model, v.vec::vector
    from unnest(p_chunk_ids, p_vectors) as v (chunk_id, vec)
    join exo_private.chunks c on c.id = v.chunk_id
    on conflict (workspace, model_id, chunk_id) do update set embedding = excluded.embedding, created_at = now();
    get diagnostics stored = row_count;
    perform exo_private.advance_stages(array(
        select distinct c.document_id from exo_private.chunks c where c.id = any (p_chunk_ids)));
    return stored;
end
$$;
comment on function exo_private.store_embeddings(text, int, bigint[], text[]) is
    'Store vectors of one model for chunks (dimensions checked); returns how many were stored.';

-- exo_private.messages_to_embed: the messages of chat windows that have no vector of a model yet.
create or replace function exo_private.messages_to_embed(p_chunk_ids bigint[], p_model text, p_dimensions int)
returns table (message_id bigint, text text)
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    -- "Sender: text", the sender named as the window's lines name them (sql/210_chat_windows.sql).
    select distinct on (m.id) m.id, coalesce(i.display_name, p.display_name, i.handle) || ': ' || m.body
    from exo_private.chat_windows w
    cross join unnest(w.message_ids) x (message_id)
    join exo_private.chat_messages m on m.id = x.message_id
    join exo_private.chat_identities i on i.id = m.identity_id
    left join exo_private.people p on p.id = i.person_id
    where w.chunk_id = any (p_chunk_ids)
      and not exists (
          select 1 from exo_private.chat_message_embeddings e
          join exo_private.embedding_models em on em.id = e.model_id
          where e.message_id = m.id and em.name = p_model and em.dimensions = p_dimensions)
    order by m.id
$$;
comment on function exo_private.messages_to_embed(bigint[], text, int) is
    'The messages of the chat windows among p_chunk_ids that have no vector of model (p_model, '
    'p_dimensions) yet, each as "Sender: text"; the worker embeds them with the windows.';

-- exo_private.store_message_embeddings: store vectors of one model for chat messages.
create or replace function exo_private.store_message_embeddings(
    p_model text, p_dimensions int, p_message_ids bigint[], p_vectors public.vector[]
)
returns int
language plpgsql
security invoker
set search_path = exo_private, public, pg_temp
as $$
declare
    model int := exo_private.checked_vectors_model(p_model, p_dimensions, 'message', p_message_ids, p_vectors::text[]);
    stored int;
begin
    -- Messages deleted since (their conversation was) are dropped.
    insert into exo_private.chat_message_embeddings (message_id, model_id, embedding)
    select m.id, model, v.vec
    from unnest(p_message_ids, p_vectors) as v (message_id, vec)
    join exo_private.chat_messages m on m.id = v.message_id
    on conflict (message_id, model_id) do update set embedding = excluded.embedding;
    get diagnostics stored = row_count;
    return stored;
end
$$;
comment on function exo_private.store_message_embeddings(text, int, bigint[], public.vector[]) is
    'Store vectors of one model for chat messages (dimensions checked); returns how many were stored.';

-- exo_private.advance_stages: chunked -> embedded -> graphed as the worker's results arrive.
create or replace function exo_private.advance_stages(p_documents bigint[])
returns void
language sql
security invoker
set search_path = exo_private, pg_temp
as $$
    with model as (select exo_private.active_embedding_model() as id),
    progress as (
        select d.id,
               not exists (select 1 from exo_private.chunks c
                           where c.document_id = d.id
                             and not exists (select 1 from exo_private.chunk_embeddings e, model
                                             where e.workspace = c.workspace and e.chunk_id = c.id
                                               and e.model_id = model.id)) as embedded,
               not exists (select 1 from exo_private.extraction_windows w
                           where w.document_id = d.id and w.extracted_at is null) as graphed
        from exo_private.documents d
        where d.id = any (p_documents) and d.stage in ('chunked', 'embedded', 'graphed')
    )
    update exo_private.documents d
       set stage = case when p.embedded and p.graphed then 'graphed'
                        when p.embedded then 'embedded'
                        else 'chunked' end::exo_private.document_stage,
           stage_changed_at = now()
      from progress p
     where d.id = p.id
       and d.stage is distinct from (case when p.embedded and p.graphed then 'graphed'
                                          when p.embedded then 'embedded'
                                          else 'chunked' end)::exo_private.document_stage
$$;
comment on function exo_private.advance_stages(bigint[]) is
    'Set documents to embedded (every chunk has a vector of the active model) or graphed (and every '
    'window was extracted), or back to chunked.';

-- exo_private.embedding_model_changed: a new embedding model queues every chunk again.
create or replace function exo_private.embedding_model_changed()
returns trigger
language plpgsql
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    model int := exo_private.embedding_model_id(new.value ->> 'model', (new.value ->> 'dimensions')::int);
begin
    perform pgmq.send_batch('embed', array_agg(jsonb_build_object('chunk_id', c.id, 'workspace', c.workspace)))
    from exo_private.chunks c
    where not exists (select 1 from exo_private.chunk_embeddings e
                      where e.workspace = c.workspace and e.chunk_id = c.id and e.model_id = model)
    having count(*) > 0;
    -- and every outside document whose kept passages lack its vector (sql/710_kb_outside.sql)
    perform pgmq.send_batch('embed', array_agg(jsonb_build_object('outside_id', s.outside_id)))
    from (select distinct p.outside_id from exo_private.kb_outside_passages p
          where not exists (select 1 from exo_private.kb_outside_passage_embeddings e
                            where e.outside_id = p.outside_id and e.digest = p.digest and e.model_id = model)) s
    having count(*) > 0;
    perform exo_private.advance_stages(array(
        select d.id from exo_private.documents d where d.stage in ('embedded', 'graphed')));
    return new;
end
$$;
comment on function exo_private.embedding_model_changed() is
    'Trigger: when models.embeddings names another model or dimension, register it (its own HNSW '
    'indexes) and queue every chunk, and every outside document with a kept passage, without its vector; '
    'vectors of two models never share an index.';

create or replace trigger embedding_model_changed
    after update on exo_private.settings
    for each row
    when (new.key = 'models.embeddings'
          and (old.value ->> 'model' is distinct from new.value ->> 'model'
               or old.value ->> 'dimensions' is distinct from new.value ->> 'dimensions'))
    execute function exo_private.embedding_model_changed();

-- exo_private.set_embedding_model: switch models (the trigger above queues the work).
create or replace function exo_private.set_embedding_model(p_model text, p_dimensions int)
returns int
language sql
security invoker
set search_path = exo_private, pg_temp
as $$
    update exo_private.settings s
       set value = s.value || jsonb_build_object('model', p_model, 'dimensions', p_dimensions), updated_at = now()
     where s.key = 'models.embeddings';
    select count(*)::int
    from exo_private.chunks c
    where not exists (select 1 from exo_private.chunk_embeddings e
                      join exo_private.embedding_models m on m.id = e.model_id
                      where e.workspace = c.workspace and e.chunk_id = c.id
                        and m.name = p_model and m.dimensions = p_dimensions);
$$;
comment on function exo_private.set_embedding_model(text, int) is
    'Make another embedding model active; returns how many chunks were queued to be embedded with it.';
