-- The hints' count of charged chunks per deferred subject and workspace, kept as chunks are
-- written (issue 32): every search's hints read it whatever its question, and counting the
-- charged chunks themselves grew with the memory (20-25 ms a search at 10,000 charged chunks of a
-- million). sql/450_deference.sql's triggers keep it; exo_private.charged_counts reads it.
create table exo_private.charged_tallies (
    workspace text not null,
    subject text not null,
    n integer not null check (n >= 0),
    primary key (workspace, subject)
);
comment on table exo_private.charged_tallies is
    'Per workspace and charged subject, how many chunks (document chunks and chat windows) are '
    'charged for it: exo_private.chunks.charged_subjects counted, kept by the chunks_tally_charges '
    'triggers (exo_private.tally_charges); a row of 0 is a subject none is charged for now.';

insert into exo_private.charged_tallies (workspace, subject, n)
select c.workspace, s.subject, count(*)
from exo_private.chunks c
cross join lateral unnest(c.charged_subjects) s (subject)
where c.charged_subjects <> '{}'
group by 1, 2;
