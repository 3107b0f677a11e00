-- Scheduled jobs: each sql/ file that wants a pg_cron job declares it here with
-- want_cron_job; the migrator then schedules them in the database pg_cron serves
-- (cron.database_name) with cron.schedule_in_database for this database, so every exo
-- database of a server gets its own jobs (ops/migrate.py schedule_jobs). The declarations
-- are made afresh on every migrate: a job no file declares any more is unscheduled.
delete from exo_private.cron_jobs;

-- exo_private.want_cron_job: declare a pg_cron job of this database (scheduled by the migrator).
create or replace function exo_private.want_cron_job(
    job_name text, job_schedule text, job_command text, job_username text, cron_database_only boolean default false
)
returns void
language sql volatile
security invoker
set search_path = exo_private, pg_temp
as $$
    insert into exo_private.cron_jobs (name, schedule, command, username, cron_database_only)
    values (job_name, job_schedule, job_command, job_username, cron_database_only)
    on conflict (name) do update
        set schedule = excluded.schedule, command = excluded.command, username = excluded.username,
            cron_database_only = excluded.cron_database_only
$$;
comment on function exo_private.want_cron_job(text, text, text, text, boolean) is
    'Declare a pg_cron job of this database (name, schedule, command, the role it runs as; '
    'cron_database_only: only when this is the database pg_cron serves): `exo migrate` schedules it '
    'in cron.database_name for this database.';
