"""The analysis' database side: one read per table for a whole batch, bulk writes, no per-row round trips.

Concurrency rules (several workers analyse batches at once):

* every multi-row write sorts its rows by key, so transactions lock rows in the
  same order and cannot deadlock on one table;
* rows that every batch touches (usage counters, endpoints, observed paths,
  addresses) are written last, just before commit, and rows that only need a
  timestamp refresh are rewritten at most once a second or minute, so workers
  queue behind each other briefly, not for a whole analysis;
* creations use ``ON CONFLICT DO NOTHING`` and re-read, adopting a row another
  worker created first.

One module per table family: ``hosts``, ``endpoints``, ``datafields``, ``apitraces`` (stored
traces), ``observations`` (usage, observed paths, callers, addresses); ``rows`` holds the rows
they share. The pipeline imports them from here.
"""
from .apitraces import trace_rows, traces_store
from .datafields import FieldRow, FieldState
from .endpoints import endpoint_risks, endpoints_resolve, endpoints_update
from .hosts import destinations, hosts_resolve
from .observations import observations_store, pairs_store
from .rows import EndpointRow, HostRow

__all__ = [
    "EndpointRow", "FieldRow", "FieldState", "HostRow", "destinations", "endpoint_risks", "endpoints_resolve",
    "endpoints_update", "hosts_resolve", "observations_store", "pairs_store", "trace_rows", "traces_store",
]
