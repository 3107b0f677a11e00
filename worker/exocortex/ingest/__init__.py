"""Ingestion: scan, extract, route, band, chunk; the chat-history lane."""
