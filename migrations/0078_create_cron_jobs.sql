-- The pg_cron jobs this database wants. pg_cron runs in one database of the server
-- (cron.database_name), so a job cannot be scheduled from the database it serves: the sql/
-- files declare each job here (exo_private.want_cron_job, sql/005_cron_jobs.sql) and the
-- migrator schedules them in pg_cron's database with cron.schedule_in_database, for this
-- database; `exo doctor` checks that they exist.
create table exo_private.cron_jobs (
    name     text primary key,
    schedule text not null,
    command  text not null,
    username text not null,
    cron_database_only boolean not null default false
);
comment on table exo_private.cron_jobs is
    'The pg_cron jobs this database wants (declared by sql/ on every migrate, scheduled by the migrator '
    'in cron.database_name for this database, as NAME there or NAME@DATABASE for a database pg_cron does not serve; '
    'cron_database_only: a job only for the database pg_cron serves, as the upkeep of its run log)';
