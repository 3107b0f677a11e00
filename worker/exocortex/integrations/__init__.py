"""Retrievers for agent frameworks, thin adapters over exocortex.api.

`exocortex.integrations.langchain.ExocortexRetriever` (pip install 'exocortex[langchain]') and
`exocortex.integrations.llamaindex.ExocortexRetriever` (pip install 'exocortex[llamaindex]').
Importing this package imports neither framework; each module imports its own.
"""
