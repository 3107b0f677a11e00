-- A person's corrections of the timeline, kept apart from the events so that they survive a
-- rebuild (exo_private.store_events applies them whenever a document is read again, as entity
-- merges survive one): merge one activity name into another, or drop one event (known by its
-- document, sentence and activity, which stay when the text is read again).
create table exo_private.event_corrections (
    id            bigint generated always as identity primary key,
    kind          text not null check (kind in ('merge', 'drop')),
    activity      text not null,
    into_activity text,
    document_id   bigint references exo_private.documents (id) on delete cascade,
    sentence      text,
    created_at    timestamptz not null default now(),
    check ((kind = 'merge') = (into_activity is not null and document_id is null and sentence is null)),
    check ((kind = 'drop') = (document_id is not null and sentence is not null))
);
comment on table exo_private.event_corrections is
    'Corrections of the timeline that survive a rebuild: merge (activity becomes into_activity '
    'everywhere) or drop (the event of activity told by sentence in document_id). Applied in id '
    'order by exo_private.store_events.';
