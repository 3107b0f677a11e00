-- Memory per backend: the operating system's per-process data limit (RLIMIT_DATA,
-- plpy/backend_memory.py), which PostgreSQL's own documentation points to for keeping one
-- backend from exhausting the machine. Past its limit a backend's allocation fails, its query
-- ends with "out of memory" (SQLSTATE 53200), and every other session keeps working.
--
-- The server starts every process under a soft default (exocortex.runtime.local,
-- PROCESS_DATA_SOFT_LIMIT; docker/entrypoint.sh), so what never logs in, a parallel worker a
-- reader's query asked for or a pg_cron job, is bounded too. At login this trigger gives a
-- reader's backend (exo_reader and every profile role, its members) reader.backend_memory
-- above what it uses, as both limits: an unprivileged process never raises a hard limit. Any
-- other role's backend (the owner, the writer, the admin) lifts its soft limit to the hard one,
-- and so do the pg_cron jobs that can grow with the memory (router training, re-banding,
-- capsules, the audit, the kb decay), as the first thing their command does. A reader's login
-- past reader.connection_limit reader sessions in all (every profile's role counts) is refused,
-- so the readers' memory together has a bound that adding profiles does not raise.
-- docs/security.md says why and how to change it.

-- exo_private.bound_backend_memory: limit this backend to what it uses plus p_bytes, for good.
create or replace function exo_private.bound_backend_memory(p_bytes bigint)
returns bigint
language plpython3u volatile
security invoker
set search_path = exo_private, pg_temp
as $$
# exo:include backend_memory
return bound(p_bytes)
$$;
comment on function exo_private.bound_backend_memory(bigint) is
    'Set this backend''s data limit (RLIMIT_DATA), soft and hard, to what it maps now plus p_bytes; '
    'it can never be raised again in this session. Returns the limit in bytes.';

-- exo_private.lift_backend_memory: raise this backend's soft data limit to its hard one.
create or replace function exo_private.lift_backend_memory()
returns bigint
language plpython3u volatile
security invoker
set search_path = exo_private, pg_temp
as $$
# exo:include backend_memory
return lift()
$$;
comment on function exo_private.lift_backend_memory() is
    'Raise this backend''s soft data limit (RLIMIT_DATA) to its hard one, for the trusted roles whose '
    'sessions start under the server''s soft default; returns the limit in bytes (-1: none).';

-- exo_private.backend_memory: this backend's data limits and what it maps now.
create or replace function exo_private.backend_memory()
returns jsonb
language plpython3u volatile
security invoker
set search_path = exo_private, pg_temp
as $$
# exo:include backend_memory
import json
soft, hard = limits()
return json.dumps({"soft": soft, "hard": hard, "in_use": data_in_use()})
$$;
comment on function exo_private.backend_memory() is
    'This backend''s data limits (RLIMIT_DATA) and the private data it maps now, in bytes: '
    '{soft, hard, in_use}; -1 for no limit.';

-- exo_private.server_memory: the bounds of the server's processes, for exo doctor.
create or replace function exo_private.server_memory()
returns jsonb
language plpython3u volatile
security invoker
set search_path = exo_private, pg_temp
as $$
# exo:include backend_memory
import json
limits = postmaster_limits()
return json.dumps({
    "postmaster_soft": limits[0] if limits else None,
    "postmaster_hard": limits[1] if limits else None,
    "memory_total": memory_total(),
})
$$;
comment on function exo_private.server_memory() is
    'What bounds the server''s processes: the postmaster''s data limits (soft, hard; -1 none, null '
    'unknown), which every process that never logs in runs under, and the machine''s memory in bytes.';

-- exo_private.on_login: a new session's memory bound, by its role (the login event trigger).
create or replace function exo_private.on_login()
returns event_trigger
language plpgsql volatile
security definer
as $$
declare
    wanted text;
    bytes bigint;
    allowed jsonb;
    sessions bigint;
begin
    -- The search path for this transaction alone, not a SET clause on the function: after a
    -- login trigger with a SET clause every BM25 index scan of the session ran about 1.5 ms
    -- slower (bench/login_cost.py measures it). This line resolves nothing through the path.
    perform pg_catalog.set_config('search_path', 'exo_private, pg_temp', true);
    wanted := coalesce((select s.value #>> '{}' from exo_private.settings s
                        where s.key = 'reader.backend_memory'), '256MB');
    allowed := (select s.value from exo_private.settings s where s.key = 'reader.connection_limit');
    if not exo_private.is_reader_role(session_user) then
        perform exo_private.lift_backend_memory();
        return;
    end if;
    -- All reader sessions together, whichever role (exo_reader, each profile's): their memory
    -- is reader.connection_limit x reader.backend_memory however many profiles there are. This
    -- backend is in pg_stat_activity before the trigger runs, so two logins at once both count
    -- each other and the total never passes the limit.
    if jsonb_typeof(allowed) is distinct from 'number' or allowed::numeric < 1 then
        raise warning 'reader.connection_limit = % is not a number of sessions; using 32', allowed;
        allowed := '32';
    end if;
    sessions := (select count(*) from pg_catalog.pg_stat_activity a
                 where a.backend_type = 'client backend' and exo_private.is_reader_role(a.usename));
    if sessions > allowed::numeric then
        raise exception 'too many reader sessions: % are open and reader.connection_limit is %',
            sessions, allowed
            using errcode = 'too_many_connections',
                  hint = 'wait for one to close, or raise reader.connection_limit (docs/security.md)';
    end if;
    begin
        bytes := pg_catalog.pg_size_bytes(wanted);
    exception when invalid_parameter_value then
        bytes := null;
    end;
    if bytes is null or bytes < 16 * 1024 * 1024 then
        -- A setting that is not a size of at least 16MB bounds the reader by the default.
        raise warning 'reader.backend_memory = % is not a size of at least 16MB; using 256MB', wanted;
        bytes := 256 * 1024 * 1024;
    end if;
    perform exo_private.bound_backend_memory(bytes);
end
$$;
comment on function exo_private.on_login() is
    'The login event trigger exo_backend_memory: a reader''s backend (exo_private.is_reader_role) is '
    'refused past reader.connection_limit reader sessions in all, and '
    'bounded to reader.backend_memory above what it maps at login, for the whole session; any other '
    'role''s backend lifts the server''s soft default (exo_private.lift_backend_memory).';

do $$
begin
    if not exists (select 1 from pg_catalog.pg_event_trigger t where t.evtname = 'exo_backend_memory') then
        create event trigger exo_backend_memory on login execute function exo_private.on_login();
    end if;
end
$$;
