-- What every exo function shares when it refuses an argument or holds something back:
-- one error for bad input, one workspace check, one phrasing of how to ask for a
-- deferred subject.

-- exo_private.invalid_argument: raise invalid_parameter_value (22023) with a message and a hint.
create or replace function exo_private.invalid_argument(message text, hint text default null)
returns void
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
begin
    if hint is null then
        raise exception '%', message using errcode = 'invalid_parameter_value';
    end if;
    raise exception '%', message using errcode = 'invalid_parameter_value', hint = hint;
end
$$;
comment on function exo_private.invalid_argument(text, text) is
    'Raise invalid_parameter_value (sqlstate 22023) with the message (which names the argument) '
    'and an optional hint: the one way the exo API refuses bad input.';

-- exo_private.quoted: an argument as an error message echoes it, quoted and at most 100 characters.
create or replace function exo_private.quoted(argument text)
returns text
language sql immutable
security invoker
set search_path = exo_private, pg_temp
as $$
    select case when argument is null then 'null'
                when pg_catalog.length(argument) <= 100 then pg_catalog.quote_literal(argument)
                else pg_catalog.quote_literal(pg_catalog.left(argument, 100) || '…') end
$$;
comment on function exo_private.quoted(text) is
    'An argument quoted for an error message: null as null, and no more than its first 100 '
    'characters (a refusal never echoes a huge input).';

-- exo_private.check_workspaces: refuse workspace names that do not exist.
create or replace function exo_private.check_workspaces(names text[])
returns void
language plpgsql stable
security invoker
set search_path = exo_private, pg_temp
as $$
declare
    unknown text;
begin
    select w into unknown from unnest(names) w
    where w is null or not exists (select 1 from exo_private.workspaces x where x.name = w)
    limit 1;
    if found then
        perform exo_private.invalid_argument(
            format('workspace %s does not exist', exo_private.quoted(unknown)),
            'known workspaces: ' || (select string_agg(x.name, ', ' order by x.name) from exo_private.workspaces x));
    end if;
end
$$;
comment on function exo_private.check_workspaces(text[]) is
    'Raise invalid_parameter_value naming the first of names that is no workspace (a null included), '
    'with the known workspaces as hint; a null array passes.';

-- exo_private.hint_how: how to ask for a withheld subject.
create or replace function exo_private.hint_how(subject text)
returns text
language sql immutable
security invoker
set search_path = exo_private, pg_temp
as $$
    select 'ask with bridge => array[' || pg_catalog.quote_literal(subject) || ']'
$$;
comment on function exo_private.hint_how(text) is
    'The "how" of a deference hint: the bridge argument that opens the subject.';

-- exo_private.is_reader_role: whether a role is the reader or one of its members (a profile).
create or replace function exo_private.is_reader_role(p_role name)
returns boolean
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    select exists (
        select 1 from pg_catalog.pg_roles r
        where r.rolname = p_role
          and (r.rolname = 'exo_reader'
               or exists (select 1 from pg_catalog.pg_auth_members m
                          where m.member = r.oid and m.roleid = 'exo_reader'::regrole)))
$$;
comment on function exo_private.is_reader_role(name) is
    'True for exo_reader and the roles that are its direct members (each profile''s login role).';

-- exo_private.session_profile_name: the profile this session's login role is, or null.
create or replace function exo_private.session_profile_name()
returns text
language sql stable
security invoker
set search_path = exo_private, pg_temp
as $$
    select p.name from exo_private.kb_profiles p where p.role = session_user
$$;
comment on function exo_private.session_profile_name() is
    'The profile whose login role this session is (kb_profiles.role = session_user), or null: the '
    'plain reader, the writer and the admin have none.';
