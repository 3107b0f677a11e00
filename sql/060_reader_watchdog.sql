-- The reader watchdog: limits on reader sessions that the session itself cannot lift.
-- statement_timeout and idle_in_transaction_session_timeout are set on exo_reader, but any
-- session may change its own; this job cancels what runs too long anyway. Every exo
-- database has its own job, which watches the reader sessions of its database with its own
-- limits (pg_stat_activity is cluster-wide: datname keeps the databases apart).

-- Seeing another role's state and query_start in pg_stat_activity takes pg_read_all_stats;
-- signalling its backend takes pg_signal_backend (never a superuser's backend).
grant pg_read_all_stats, pg_signal_backend to exo_owner;

-- exo_private.stop_runaway_readers: cancel reader statements and end idle reader transactions past their limits.
create or replace function exo_private.stop_runaway_readers()
returns table (pid int, action text, state text, seconds int)
language sql volatile
security definer
set search_path = exo_private, pg_temp
as $$
    with limits as (
        select (select s.value::text::numeric from exo_private.settings s
                where s.key = 'reader.max_statement_s') as statement_s,
               (select s.value::text::numeric from exo_private.settings s
                where s.key = 'reader.max_idle_in_transaction_s') as idle_s
    ), runaway as materialized (  -- decided before anything is signalled
        select a.pid, a.state,
               case when a.state = 'active' then 'cancel' else 'terminate' end as action,
               extract(epoch from pg_catalog.now()
                   - case when a.state = 'active' then a.query_start else a.state_change end)::int as seconds
        from pg_catalog.pg_stat_activity a, limits l
        where a.datname = pg_catalog.current_database()
          and exo_private.is_reader_role(a.usename)
          and a.pid <> pg_catalog.pg_backend_pid()
          and ((a.state = 'active'
                and a.query_start < pg_catalog.now() - pg_catalog.make_interval(secs => l.statement_s))
            or (a.state like 'idle in transaction%'
                and a.state_change < pg_catalog.now() - pg_catalog.make_interval(secs => l.idle_s)))
    )
    select r.pid, r.action, r.state, r.seconds
    from runaway r
    cross join lateral (select case r.action when 'cancel' then pg_catalog.pg_cancel_backend(r.pid)
                                             else pg_catalog.pg_terminate_backend(r.pid) end as sent) s
    where s.sent
$$;
comment on function exo_private.stop_runaway_readers() is
    'Cancel every reader statement (exo_reader''s or a profile role''s) running longer than '
    'reader.max_statement_s and end every reader session idle in a transaction longer than '
    'reader.max_idle_in_transaction_s, in this '
    'database; returns what it signalled (pid, action, state, seconds). Run every '
    '10 s by pg_cron (job exo-reader-watchdog).';

-- Every 10 seconds, as the owner (not a superuser). The database pg_cron serves also keeps its
-- run log, of so frequent a job, for a day (cron.job_run_details is there only).
select exo_private.want_cron_job(
    'exo-reader-watchdog', '10 seconds', 'select count(*) from exo_private.stop_runaway_readers()', 'exo_owner');
select exo_private.want_cron_job(
    'exo-cron-log-upkeep', '41 4 * * *',
    'delete from cron.job_run_details where end_time < now() - interval ''1 day''', 'exo_owner', true);
