"""Retrievers for agent frameworks, thin adapters over exocortex.client.api.

`exocortex.client.integrations.langchain.ExocortexRetriever` (pip install 'exocortex[langchain]') and
`exocortex.client.integrations.llamaindex.ExocortexRetriever` (pip install 'exocortex[llamaindex]').
Importing this package imports neither framework; each module imports its own.
"""
