"""The read side: the exo API in Python, the SQL guard, the MCP server and the agent frameworks' retrievers."""
