-- Ingestion that never deletes on doubt: ledger rows keyed by the raw bytes of a
-- path, the folders a scan could not list, and the limits one file may use.

-- One ledger row per real file. A name with invalid UTF-8 and a file literally named
-- with its escaped form shared the display path; the key is now the path's bytes.
-- Rows from before hold their display path's bytes: a file whose name had undecodable
-- bytes is found again under its real key (its text comes from the cache) and the old
-- row is marked deleted.
alter table exo_private.documents add column path_bytes bytea;
update exo_private.documents set path_bytes = convert_to(path, 'UTF8');
alter table exo_private.documents alter column path_bytes set not null;
alter table exo_private.documents drop constraint documents_source_id_path_key;
-- Through a hash: a deep path is longer than a btree entry may be.
create unique index documents_source_path_bytes_idx
    on exo_private.documents (source_id, sha256(path_bytes));
comment on column exo_private.documents.path_bytes is
    'The path relative to the source root as the file system''s raw bytes: the ledger key.';
comment on column exo_private.documents.path is
    'Display form of path_bytes, for people: undecodable bytes written as \x escapes (not unique).';

create table exo_private.unreadable_folders (
    source_id     int not null references exo_private.sources (id) on delete cascade,
    path_bytes    bytea not null,
    path          text not null,
    error         text not null,
    first_seen_at timestamptz not null default now(),
    last_seen_at  timestamptz not null default now()
);
create unique index unreadable_folders_key_idx
    on exo_private.unreadable_folders (source_id, sha256(path_bytes));
comment on table exo_private.unreadable_folders is
    'Folders the last scan of a source could not list, with the error; the documents stored from '
    'them are kept as they were until a scan lists the folder again.';

insert into exo_private.settings (key, value, description) values
    ('ingest.max_file_bytes', '209715200',
     'Files larger than this, and extracted texts larger than this, end failed with too_large.'),
    ('ingest.file_timeout_s', '300',
     'Seconds one file may take to extract (in a separate process, killed past it), and again to '
     'route, band and chunk in the database; past either the file ends failed with timeout.'),
    ('ingest.extract_memory_bytes', '4294967296',
     'Memory the extraction process may allocate; a file that needs more ends failed with too_large.');
