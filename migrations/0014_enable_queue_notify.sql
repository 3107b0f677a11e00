-- The worker waits on LISTEN/NOTIFY instead of polling: pgmq notifies channel
-- 'pgmq.q_<queue>.INSERT' when a message is sent (at most once per 250 ms per queue).
select pgmq.enable_notify_insert('embed');
select pgmq.enable_notify_insert('extract');
