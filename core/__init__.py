"""Cross-cutting pieces: API keys, authentication, error bodies, query parameters, health."""
