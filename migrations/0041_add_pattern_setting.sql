-- The deterministic pattern pass of extraction (issue 16, worker/exocortex/relation_patterns.py):
-- on by default, measured in docs/benchmarks.md ("Relations a CPU can find").

insert into exo_private.settings (key, value, description) values
    ('extraction.patterns', 'true',
     'Run the deterministic pattern pass on every extraction window: kinship, friendship, work and '
     'residence stated in common English constructions ("Anna''s husband Tom", "my sister Jane", '
     '"Tom works at Acme Ltd") become relations beside the chat model''s, also when models.chat has '
     'no url (no chat model) or the model fails the window.');
