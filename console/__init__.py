"""The operators' console: the Django admin branded as the product, with a dashboard as its index,
ingestion health, the hosts graph, an endpoint page to work from and a read-only operators' group
(docs/console.md)."""
