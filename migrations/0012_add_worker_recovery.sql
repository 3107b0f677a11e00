-- The worker loses no work: which worker holds which message (so a dead worker's
-- messages are taken back), failures that can be retried, and the settings for
-- telling a dead worker and a slow model apart from a bad job.

create table exo_private.worker_claims (
    queue      text not null,
    msg_id     bigint not null,
    worker_id  bigint not null references exo_private.workers (id) on delete cascade,
    claimed_at timestamptz not null default now(),
    primary key (queue, msg_id)
);
create index worker_claims_worker_idx on exo_private.worker_claims (worker_id);
comment on table exo_private.worker_claims is
    'The worker that last read each message still being worked on; written in the read''s '
    'transaction, removed when the job ends. A dead worker''s claims are released by reap_workers.';

alter table exo_private.job_failures add column retried_at timestamptz;
comment on column exo_private.job_failures.retried_at is
    'When `exo worker retry-failed` queued the chunk or window again (or found it no longer needs '
    'work); null while the failure stands.';

insert into exo_private.settings (key, value, description) values
    ('worker.dead_after_s', '30',
     'A worker whose heartbeat is older than this many seconds is dead: it is marked stopped and '
     'the messages it held are taken back. Workers beat every sixth of it (at most every 5 s).'),
    ('worker.max_timeout_factor', '8',
     'A model call that times out on an endpoint that still answers is load, not a bad job: it is '
     'retried with a longer deadline, up to the endpoint''s timeout_s times this; only a call that '
     'times out at that cap is recorded failed (and stays retryable).');

update exo_private.settings
   set description = 'A message read more often than this goes to the dead_letter queue. Reads '
                     'while the probe says the endpoint is down do not count.'
 where key = 'worker.max_reads';
