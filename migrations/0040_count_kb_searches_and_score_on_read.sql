-- The personal base, fast enough (issue 17's benchmarks). Recording a search no longer bumps a
-- counter on every surfaced and suggested row of the profile: each row keeps the number of the
-- profile's search that last returned it (kb_profiles.searches counts them), and the reset rule
-- reads "searches since last seen >= kb.reset_threshold". The daily score is no longer stored per
-- row: exo_private.kb_scores (sql/700_kb.sql) computes it from the stored inputs as of the
-- profile's last decay (kb_profiles.decayed_at), and the decay writes only the rows whose
-- high_since / low_since or state change.

alter table exo_private.kb_items add column last_seen_search bigint;
comment on column exo_private.kb_items.last_seen_search is
    'The number (kb_profiles.searches) of the user''s search that last returned the document, or the '
    'search at which its count was last reset; null: never returned since it entered or left the base. '
    'Searches since then >= kb.reset_threshold resets fetch_count.';
update exo_private.kb_items i
   set last_seen_search = p.searches - i.absent_streak
  from exo_private.kb_profiles p
 where p.id = i.profile_id and i.state <> 'global';
alter table exo_private.kb_items drop column absent_streak;

-- The reset finds only the rows still counting whose last search is far enough back.
create index kb_items_counting_idx on exo_private.kb_items (profile_id, last_seen_search)
    where state in ('surfaced', 'suggested') and fetch_count > 0;

alter table exo_private.kb_profiles add column decayed_at timestamptz;
comment on column exo_private.kb_profiles.decayed_at is
    'When the daily decay last scored this profile''s base (exo_private.kb_decay): the time '
    'exo_private.kb_scores computes scores as of; null: never.';
update exo_private.kb_profiles p
   set decayed_at = (select max(i.scored_at) from exo_private.kb_items i where i.profile_id = p.id);

-- The stored score goes: exo.kb_items returns the same columns, now from exo_private.kb_scores.
alter table exo_private.kb_items drop column score, drop column scored_at;
