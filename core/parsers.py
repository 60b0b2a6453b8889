"""The JSON body parser of every API route (DRF's default parser, see settings).

Stricter than DRF's own (Python ``json``) where strictness keeps bad input a ``400``
instead of a crash further down:

* nesting: ``json`` recurses and raises ``RecursionError`` on deep arrays (a 500); orjson
  stops at 1,024 levels and we refuse anything deeper than ``MAX_DEPTH``, so serializers,
  ``json.dumps`` and recursive walks never see a structure deep enough to exhaust the stack;
* ``NaN``/``Infinity``, numbers that overflow to infinity, lone surrogates and invalid
  UTF-8: refused (PostgreSQL ``jsonb``/``text`` cannot store them).

It subclasses DRF's parser so that DRF hands it ``request.body``, which enforces
``DATA_UPLOAD_MAX_MEMORY_SIZE`` (``413``) before anything is read.
"""
from __future__ import annotations

import orjson
from rest_framework import parsers
from rest_framework.exceptions import ParseError

from .safejson import nested_deeper_than

MAX_DEPTH = 64


class JSONParser(parsers.JSONParser):
    """``application/json`` bodies, parsed with orjson; errors are ``ParseError`` (ZOD 400)."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = orjson.loads(stream.read())
        except orjson.JSONDecodeError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
        if nested_deeper_than(data, MAX_DEPTH):
            raise ParseError(f"JSON nested deeper than {MAX_DEPTH} levels")
        return data
