"""Model services: the HTTP client every model call goes through, and the local servers."""
