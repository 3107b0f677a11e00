"""exocortex: a Postgres-native personal knowledge substrate for language-model agents."""
