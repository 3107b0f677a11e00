-- Declared facts (issue 15): the frontmatter keys that say how a document is filed, not what is
-- true of its subject (exo_private.declared_facts, sql/620_declared_facts.sql).

insert into exo_private.settings (key, value, description) values
    ('facts.frontmatter_ignore',
     '["title", "subject", "date", "created", "updated", "modified", "band", "workspace", "tags", "tag", '
     '"charged", "canonical", "aliases", "alias", "id", "uid", "permalink", "slug", "layout", "draft", '
     '"publish", "cssclass", "cssclasses"]',
     'Frontmatter keys that are never declared facts (compared as fact attributes: case, spaces and '
     'hyphens ignored): they file the document, they say nothing of its subject.');
