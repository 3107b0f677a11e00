"""The plpython3u bodies' modules: standard library only, inlined into sql/ by `# exo:include`.

Python code imports the ones it shares with the database as `exocortex.plpy.NAME`.
"""
