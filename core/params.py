"""Query-string parsing shared by every list route.

Array parameters arrive three ways and all mean the same (DECISIONS §1):
repeated keys (``hosts=a&hosts=b``), bracket keys (``hosts[]=a&hosts[]=b``)
and a single value (``hosts=a``).
"""
from __future__ import annotations

import threading
from collections import OrderedDict
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


# (serializer class, list fields, raw query string) -> validated values. Query serializers are
# pure functions of the query string (no database, no clock), and building one costs more than
# the rest of a list request (DRF deep-copies every declared field per instance): the same query
# string is validated once per process. Errors are not kept: an invalid query runs the serializer
# each time and raises its ZOD error.
_VALIDATED: OrderedDict = OrderedDict()
_VALIDATED_MAX = 1024
_validated_lock = threading.Lock()


def query_validated(request, serializer_class, list_fields: Iterable[str] = ()) -> dict:
    """``validate(serializer_class(data=query_dict(request.query_params, list_fields)))``, memoised.

    Only for query serializers whose result depends on nothing but the query string. Returns a
    new dict each call (callers may change it).
    """
    from core.errors import validate

    key = (serializer_class, tuple(list_fields), request.META.get("QUERY_STRING", ""))
    with _validated_lock:
        cached = _VALIDATED.get(key)
        if cached is not None:
            _VALIDATED.move_to_end(key)
            return dict(cached)
    data = dict(validate(serializer_class(data=query_dict(request.query_params, list_fields=list_fields))))
    with _validated_lock:
        _VALIDATED[key] = data
        while len(_VALIDATED) > _VALIDATED_MAX:
            _VALIDATED.popitem(last=False)
    return dict(data)
