"""The database runtime: the embedded forky root, or a server named by EXO_DATABASE_URL."""
