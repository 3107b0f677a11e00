"""Entity and relation extraction in the worker: the chat model's request and reply, the pattern pass, NER."""
