-- exo.document(path) finds a document by its display path. Migration 0011 moved the
-- ledger key to the path's bytes and dropped the unique (source_id, path) index, so the
-- lookup scanned every document. A hash index serves the equality lookup at any path
-- length (a btree entry has a size limit that a deep path can pass).
create index documents_path_idx on exo_private.documents using hash (path);
