-- A profile is a person, not an argument (issue 27): each profile has a login role of its own, a
-- member of exo_reader (`exo user add NAME` makes it; the migrator makes the role of a profile
-- that has none), and the knowledge-base functions take the profile from the session's role.
-- Row security on the kb tables shows a reader role only its own profile's rows; the plain
-- reader has no profile and sees none. The writer (worker, decay, `exo user list`) sees all.
alter table exo_private.kb_profiles
    add column role name,
    add column window_bytes bigint not null default 0,
    add column window_rows int not null default 0,
    add column window_embeddings int not null default 0,
    add column stored_bytes bigint not null default 0;
update exo_private.kb_profiles
   set role = case when octet_length(name) <= 54 then 'exo_user_' || name
                   else 'exo_user_' || left(name, 37) || '_' || left(md5(name), 16) end;
alter table exo_private.kb_profiles
    alter column role set not null,
    add constraint kb_profiles_role_key unique (role);
comment on column exo_private.kb_profiles.role is
    'The login role of the profile (exo_user_NAME; exo_private.profile_role): a session of this role '
    'is this profile, and the only one whose kb rows it sees.';
comment on column exo_private.kb_profiles.window_bytes is
    'Bytes of text the profile''s recording stored in the current minute (kb.write_bytes_per_minute).';
comment on column exo_private.kb_profiles.window_rows is
    'Rows the profile''s recording wrote in the current minute (kb.write_rows_per_minute).';
comment on column exo_private.kb_profiles.window_embeddings is
    'Passages the profile''s recording queued for embedding in the current minute (kb.embeddings_per_minute).';
comment on column exo_private.kb_profiles.stored_bytes is
    'Bytes of outside passages the profile keeps now (kb.stored_bytes).';
update exo_private.kb_profiles p
   set stored_bytes = coalesce((select sum(octet_length(s.body))
                                from exo_private.kb_outside_passages s
                                join exo_private.kb_outside_documents o on o.id = s.outside_id
                                where o.profile_id = p.id), 0);

insert into exo_private.settings (key, value, description) values
    ('kb.write_bytes_per_minute', '2000000',
     'A profile''s recording may store at most this many bytes of text (outside passages and titles) '
     'in any minute; past it the call is refused (program_limit_exceeded).'),
    ('kb.write_rows_per_minute', '20000',
     'A profile''s recording may write at most this many rows (items, outside documents, passages) in '
     'any minute.'),
    ('kb.stored_bytes', '50000000',
     'A profile may keep at most this many bytes of outside passages in all.'),
    ('kb.embeddings_per_minute', '200',
     'A profile''s recording may queue at most this many new passages for the worker to embed in any '
     'minute: the embedding work a profile causes is its own budget.'),
    ('reader.profile_connection_limit', '8',
     'Each profile''s login role: the most sessions it may have open at once (server-wide). Applied '
     'by `exo migrate`.'),
    ('kb.lock_timeout', '"200ms"',
     'How long recording a search waits for a lock on the profile''s rows (another session of the '
     'same profile writing); past it the search answers without recording and says why.');

-- Row security: a reader's session sees only its profile's rows through the functions that reach
-- the kb tables (owned by exo_api and exo_kb); a trusted session (the writer, the admin, the
-- owner) sees every row. The predicates live in exo_private.kb_sees_profile (sql/700_kb.sql).
alter table exo_private.kb_profiles enable row level security;
alter table exo_private.kb_items enable row level security;
alter table exo_private.kb_outside_documents enable row level security;
alter table exo_private.kb_outside_passages enable row level security;
alter table exo_private.kb_outside_passage_embeddings enable row level security;

-- The kb functions that took the profile as an argument: they take it from the session now.
drop function if exists exo.kb_record_use(text, bigint[], bigint[]);
drop function if exists exo.kb_accept_suggestion(text, bigint);
drop function if exists exo.kb_decline_suggestion(text, bigint);
drop function if exists exo.kb_thumbs_up(text, bigint);
drop function if exists exo.kb_thumbs_down(text, bigint);
drop function if exists exo.kb_force_pin(text, bigint);
drop function if exists exo.kb_force_remove(text, bigint);
drop function if exists exo.kb_items(text);
drop function if exists exo.kb_outside_retrieve(text, text, jsonb, int, float8[]);
drop function if exists exo.kb_outside_act(text, text, text);
drop function if exists exo.kb_outside_items(text);
drop function if exists exo.search(text, text[], int, int, boolean, text[], timestamptz, float8[], text);
drop function if exists exo.search_report(text, text[], int, int, boolean, text[], timestamptz, float8[], text);
drop function if exists exo.search_json(text, text[], int, int, boolean, text[], timestamptz, float8[], text);
drop function if exists exo.context_packet(text, int, text[], boolean, text[], timestamptz, float8[], text);
drop function if exists exo.context_packet_json(text, int, text[], boolean, text[], timestamptz, float8[], text);
drop function if exists exo_private.kb_count_write(bigint, boolean, timestamptz);
