-- Workspaces a person defines (exo workspace add): a name is lower-case letters, digits, - and _,
-- begins with a letter and ends with a letter, digit or _ (AGE refuses a graph name that ends
-- with -), 2 to 32 characters, so that the longest name made from it,
-- chunk_embeddings_<name>_m<model id>_hnsw, stays within an identifier's 63 bytes. Every existing
-- name matches.
alter table exo_private.workspaces drop constraint workspaces_name_check;
alter table exo_private.workspaces add constraint workspaces_name_check
    check (name ~ '^[a-z][a-z0-9_-]{0,30}[a-z0-9_]$');
