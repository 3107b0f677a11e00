-- Read routing (exocortex.client.routing): how far behind a hot standby may be and still answer
-- reads; `exo status`, `exo doctor` and `exo db replica list` warn past it.
insert into exo_private.settings (key, value, description) values
    ('replicas.max_lag_s', '30',
     'A replica (a hot standby, exo db replica add) more than this many seconds behind the primary '
     'answers no reads: the reader clients send them to another replica or to the primary, and '
     '`exo status`, `exo doctor` and `exo db replica list` warn. A replica is behind by the age of '
     'the last transaction it replayed while it has received WAL it has not replayed yet.')
on conflict (key) do nothing;
