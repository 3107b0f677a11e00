"""Operating a memory: migrations, the schema dump, the SQL lint, the doctor and the profiles' login roles."""
