"""Query-string parsing shared by every list route.

Array parameters arrive three ways and all mean the same (DECISIONS §1):
repeated keys (``hosts=a&hosts=b``), bracket keys (``hosts[]=a&hosts[]=b``)
and a single value (``hosts=a``).
"""
from __future__ import annotations

from collections.abc import Iterable

from django.http import QueryDict


def query_list(query: QueryDict, name: str) -> list[str]:
    """All values of an array parameter, in order, from plain and ``[]`` keys."""
    return [*query.getlist(name), *query.getlist(f"{name}[]")]


def query_dict(query: QueryDict, list_fields: Iterable[str] = ()) -> dict[str, object]:
    """A plain dict for a serializer: array parameters as lists, others as their last value.

    ``list_fields`` names the array parameters; bracket keys of other names are
    folded onto their bare name too, so ``limit[]=5`` is ``limit`` and gets
    validated (and rejected) as a scalar rather than ignored.
    """
    list_names = set(list_fields)
    data: dict[str, object] = {}
    for raw_key in query.keys():
        name = raw_key[:-2] if raw_key.endswith("[]") else raw_key
        if name in list_names:
            data[name] = query_list(query, name)
        else:
            values = query.getlist(raw_key)
            if values:
                data[name] = values[-1]
    return data
