-- A first ingest is searchable without review: while the learned router cannot judge (fewer
-- than two workspaces have routing.learned_min_documents documents), a document no explicit
-- rule places and the keyword lists are unsure of goes to this workspace, not to quarantine
-- (plpy/routing.py). JSON null keeps the old way: quarantine.
insert into exo_private.settings (key, value, description) values
    ('routing.default_workspace', '"personal"',
     'Where a document goes that no review, frontmatter workspace, --workspace or folder rule places '
     'and the keyword lists are unsure of, while the learned router has not been trained (fewer than '
     'two workspaces with routing.learned_min_documents documents). Such routes never train the '
     'router. null: quarantine them instead.');
