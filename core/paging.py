"""List answers shared by the list routes: one page of the matches, and the total in ``X-Total-Count``
(DECISIONS §1: lists answer bare arrays, the number of matches before paging in that header)."""
from __future__ import annotations

from collections.abc import Sequence

from django.db.models import QuerySet
from rest_framework.response import Response


def page_of(rows: QuerySet, *, offset: int, limit: int) -> tuple[Sequence, int]:
    """The page ``[offset, offset + limit)`` of ``rows`` and the number of all the matches.

    An offset past the matches is an empty page without a query (it may not fit PostgreSQL's
    bigint ``OFFSET``)."""
    total = rows.count()
    return (rows[offset: offset + limit] if offset < total else []), total


def list_response(items: list, total: int) -> Response:
    """A list in its wire form, with ``X-Total-Count: total``."""
    response = Response(items)
    response["X-Total-Count"] = str(total)
    return response
