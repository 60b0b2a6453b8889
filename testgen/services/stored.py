"""Generated tests stored per endpoint: a repeat call of the generation routes is a concatenation
of stored JSON (SPEC "Test generation"; issue #16).

Each result is kept in a :class:`~testgen.models.StoredTest` row (per endpoint and choice of
template), as the bytes GET /gen-test-endpoint answers. Its ``stamp`` is a digest of everything the
result is generated from, computed by PostgreSQL in the same statement that reads the stored rows:

* the endpoint's path, method, authentication (detected and set) and host name;
* its data fields (section, path, type, content type, status code: what the profile reads);
* the ids of its 5 newest traces and its 20 newest observed paths (with their last-seen time);
* for writes (POST, PUT, PATCH), the host's GET patterns (the read-back path of the profile);
* the host's endpoints with their last activity, and the uploaded specs' last change: what the
  templates read across the host (values seen on other endpoints, the login route, user names,
  spec enums); any new trace of the host regenerates its results;
* the testing environment row (any change of it);
* the templates' code (:func:`templates_fingerprint`: the source of the ``testgen`` package and
  of the modules generation reads, read once per process, so a deploy with edited templates
  regenerates everything without anyone bumping a version), the template registry and the
  generation settings (``TESTGEN_*``);
* the choice of template (``type``/``version``).

A stored row whose stamp differs is regenerated and replaced; nothing has to remember to
invalidate. Per host, a check that found every result valid is trusted for
``TESTGEN_STORED_RECHECK_SECONDS`` (1 s) while the inventory version (``inventory.counts``: bumped by
every change of endpoints, hosts and data fields) and the testing environment stay the same: such a
call reads the stored bodies only. New traffic that changes no endpoint or field (a newer example
body) therefore shows after at most that long. The stamp is read *before* the profile, so a result can only be newer than its stamp
(a change racing a generation costs one more generation, never a stale answer). Rows go with
their endpoint (foreign key). Storing is best effort: a failure to store is logged and the
generated answer served. Without PostgreSQL (the zero-configuration SQLite demo) nothing is
stored and every call generates.
"""
from __future__ import annotations

import gc
import hashlib
import logging
import threading
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import orjson
from django.conf import settings
from django.db import DatabaseError, connection, transaction

from core.renderers import ORJSONRenderer
from inventory.counts import inventory_version
from inventory.ingest.sql import pg_cursor, pg_execute
from inventory.models import Endpoint

from ..models import StoredTest
from ..profile import profiles_load
from ..templates import GenerationContext, registry
from .generation import METHOD_ORDER, test_generate, tests_generate_for_host

logger = logging.getLogger(__name__)

_ROOT = Path(settings.BASE_DIR)
# What generation reads besides the testgen package (all of it, migrations aside).
_GENERATION_SOURCES = ("testgen", "inventory/patterns", "inventory/ingest/credentials.py", "core/jsontypes.py",
                       "core/safejson.py", "core/renderers.py")
# Writes whose profile reads the host's GET patterns (``item_read_path``).
_READ_BACK_METHODS = ("POST", "PUT", "PATCH")
_TRACES, _OBSERVED = 5, 20  # as testgen.profile reads them

_HOST_WHERE = "e.host_id = (SELECT id FROM inventory_host WHERE upper(name) = upper(%s) ORDER BY id LIMIT 1)"
_ENVIRONMENT_SQL = "(SELECT md5(g::text) FROM testgen_testingenvironment g WHERE g.key = 'global')"
# Data fields: an order-independent digest (sum of 64-bit hashes of what the profile reads, and the
# count): no sort, a tenth of a millisecond per 100 endpoints (an ordered md5 costs a millisecond more).
_STAMP_SQL = f"""
SELECT e.uuid, e.path, e.method, md5(concat_ws(chr(29), e.path, e.method, e.is_authenticated_detected::text,
         coalesce(e.is_authenticated_user_set::text, '-'), h.name,
         (SELECT count(*) || ':' || coalesce(sum(hashtextextended(concat_ws(chr(31), f.data_section, f.status_code,
                                                                            f.data_path, f.data_type, f.content_type),
                                                                  0)), 0)
            FROM classification_datafield f WHERE f.endpoint_id = e.uuid),
         (SELECT string_agg(t.uuid::text, ',') FROM
            (SELECT uuid FROM inventory_apitrace WHERE endpoint_id = e.uuid
             ORDER BY created_at DESC LIMIT {_TRACES}) t),
         (SELECT string_agg(o.path || chr(31) || o.last_seen::text, chr(30)) FROM
            (SELECT path, last_seen FROM inventory_observedpath WHERE endpoint_id = e.uuid
             ORDER BY last_seen DESC, id DESC LIMIT {_OBSERVED}) o))),
       {_ENVIRONMENT_SQL},
       s.stamp, s.body
FROM inventory_endpoint e
JOIN inventory_host h ON h.id = e.host_id
LEFT JOIN testgen_storedtest s ON s.endpoint_id = e.uuid AND s.options = %s
WHERE """

# What every result of a host also reads from the host's other endpoints (testgen.hostfacts: values
# seen per field in their newest traces, the login route; testgen.profile: the user names the user
# read path was called with) and from uploaded specs (enums): the host's endpoints with their last
# activity (moved by new traffic, 1 s resolution) and the specs' last change. Over-invalidates
# (any new trace of the host regenerates its results), never serves a result older than its inputs.
_HOST_FACTS_SQL = """
SELECT md5(concat_ws(chr(30),
         (SELECT count(*) || ':' || coalesce(max(updated_at)::text, '') FROM detections_openapispec),
         string_agg(e.uuid::text || chr(31) || coalesce(e.last_active::text, ''), chr(29) ORDER BY e.uuid)))
FROM inventory_endpoint e
WHERE """

# The stored bodies of a host, without stamps (a trusted check, see the module docstring).
_BODIES_SQL = f"""
SELECT e.uuid, e.path, e.method, s.body, {_ENVIRONMENT_SQL}
FROM inventory_endpoint e
LEFT JOIN testgen_storedtest s ON s.endpoint_id = e.uuid AND s.options = %s
WHERE {_HOST_WHERE}"""
# (host, options, _code_and_settings) -> (inventory version, trusted until, the environment's digest).
_trusted: dict[tuple, tuple[int, float, str | None]] = {}
_TRUSTED_MAX = 1000


def storing() -> bool:
    """Whether results are stored (PostgreSQL; the stamps are PostgreSQL SQL)."""
    return connection.vendor == "postgresql"


def sources_fingerprint(root: Path, sources: tuple[str, ...]) -> str:
    """A digest of the files (and every file under the folders) ``sources`` names under ``root``:
    their paths and contents; ``__pycache__`` and ``migrations`` folders left out."""
    digest = hashlib.sha256()
    for source in sources:
        path = root / source
        files = [path] if path.is_file() else sorted(
            p for p in path.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and "migrations" not in p.parts)
        for file in files:
            digest.update(str(file.relative_to(root)).encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()


@lru_cache(maxsize=1)
def templates_fingerprint() -> str:
    """The digest of the source of test generation in this checkout (read once per process)."""
    return sources_fingerprint(_ROOT, _GENERATION_SOURCES)


def _generation_key(options: str, environment: str | None) -> bytes:
    return repr((_generation(options), environment)).encode()


def _code_and_settings(options: str) -> str:
    """What the results depend on besides the data and the testing environment: the templates' code
    and registry, the generation settings, the options. No query."""
    templates = sorted((name, version, t.priority) for name, versions in registry().items()
                       for version, t in versions.items())
    return repr((templates_fingerprint(), templates, GenerationContext.knobs(), options))


def _generation(options: str) -> str:
    """What the results depend on besides the data: :func:`_code_and_settings` and what generation
    reads of the testing environment (``GenerationContext``: its identities, decrypted; one query)."""
    return repr((_code_and_settings(options), GenerationContext.from_settings()))


def options_key(template_name: str | None, version: int | None) -> str:
    return f"{template_name}:{version or ''}" if template_name else ""


@dataclass
class _Stored:
    uuid: object
    path: str
    method: str
    stamp: str
    body: bytes | None  # None: to generate
    environment: str | None = None  # the testing environment's digest, as the stamp saw it


_RENDERER = ORJSONRenderer()


def render(value) -> bytes:
    """JSON bytes as the API renders them (so concatenations equal a rendering of the whole)."""
    return _RENDERER.render(value)


def _stamped(where: str, params: list, *, options: str, get_patterns: list[str] | None = None,
             host_where: str = _HOST_WHERE, host_params: list | None = None) -> list[_Stored]:
    """The endpoints selected by ``where``, each with its current stamp and its stored body when
    that body is still valid. ``get_patterns``: the host's GET patterns (read from the rows when None);
    ``host_where``/``host_params``: the host's endpoints, whose traffic every result also reads."""
    # Prepared, and in binary form: the stored bodies arrive as bytes, without hex text to decode.
    with pg_cursor(binary=True) as cursor:
        cursor.execute(_STAMP_SQL + where, [options, *params], prepare=True)
        rows = cursor.fetchall()
        cursor.execute(_HOST_FACTS_SQL + host_where, host_params if host_params is not None else params,
                       prepare=True)
        host_facts = cursor.fetchone()[0] or ""
    if get_patterns is None:
        get_patterns = [path for _, path, method, *_ in rows if method == "GET"]
    read_back = hashlib.sha256("\x1e".join(sorted(get_patterns)).encode()).hexdigest()
    base = _generation_key(options, rows[0][4] if rows else None) + host_facts.encode()
    result = []
    for uuid, path, method, endpoint_stamp, environment, stored_stamp, body in rows:
        parts = [base, endpoint_stamp.encode()]
        if method in _READ_BACK_METHODS:
            parts.append(read_back.encode())
        stamp = hashlib.sha256(b"\x1e".join(parts)).hexdigest()
        valid = body is not None and stored_stamp == stamp
        result.append(_Stored(uuid, path, method, stamp, bytes(body) if valid else None, environment))
    return result


def _store(items: list[_Stored], options: str) -> None:
    """Upsert the generated bodies (best effort: the answer does not depend on it)."""
    rows = [StoredTest(endpoint_id=i.uuid, options=options, stamp=i.stamp, body=i.body)
            for i in sorted(items, key=lambda i: str(i.uuid))]  # one lock order for concurrent callers
    try:
        with transaction.atomic():
            StoredTest.objects.bulk_create(rows, update_conflicts=True, unique_fields=["endpoint", "options"],
                                           update_fields=["stamp", "body", "created_at"])
    except DatabaseError as exc:  # an endpoint deleted meanwhile, a lock timeout: serve without storing
        logger.warning("Generated tests of %d endpoints not stored (%s)", len(rows), type(exc).__name__)


# One generation at a time per process: it is CPU-bound (the threads share one GIL, so running
# them together is not faster) and a host's 100 endpoints take ~13 MB while generated; 8 threads
# generating at once made the web's memory peak at ~110 MB of Python objects (bench/README.md).
_generating = threading.Lock()


def _generate(items: list[_Stored], *, host_id: int | None, template_name: str | None,
              version: int | None) -> None:
    """Generate the missing bodies (profiles in one go), then store them."""
    if any(i.body is None for i in items):
        with _generating:
            _generate_locked(items, host_id=host_id, template_name=template_name, version=version)
            gc.collect()  # its reference cycles now, before they pin memory in the oldest generation


def _generate_locked(items: list[_Stored], *, host_id: int | None, template_name: str | None,
                     version: int | None) -> None:
    missing = [i for i in items if i.body is None]
    endpoints = list(Endpoint.objects.filter(uuid__in=[i.uuid for i in missing]).select_related("host"))
    profiles = profiles_load(endpoints=endpoints, host_id=host_id)
    context = GenerationContext.from_settings()
    by_uuid = {e.uuid: e for e in endpoints}
    generated = []
    for item in missing:
        endpoint = by_uuid.get(item.uuid)
        if endpoint is None:  # deleted since the stamp was read: it is left out of this answer
            continue
        item.body = render(test_generate(endpoint=endpoint, template_name=template_name, version=version,
                                         profile=profiles[endpoint.uuid], context=context))
        generated.append(item)
    if generated:
        _store(generated, options_key(template_name, version))


def host_item(item: _Stored) -> list:
    """A per-host item from a stored single result, as parts to join: the result with ``endpoint`` and
    ``method`` after it (the stored bytes not copied), or ``{success: false, endpoint, method, msg}``."""
    if item.body.startswith(b'{"success":true'):  # two strings: orjson writes them as the renderer does
        return [memoryview(item.body)[:-1], b',"endpoint":', orjson.dumps(item.path), b',"method":',
                orjson.dumps(item.method), b"}"]
    return [render({"success": False, "endpoint": item.path, "method": item.method,
                    "msg": orjson.loads(item.body)["msg"]})]


def _trusted_bodies(trust: tuple, version: int | None, options: str, host: str) -> list[_Stored] | None:
    """The host's stored bodies when a check of them is still trusted (and all are there), else None."""
    entry = _trusted.get(trust)
    if version is None or entry is None or entry[0] != version or entry[1] < time.monotonic():
        return None
    with pg_cursor(binary=True) as cursor:
        rows = pg_execute(cursor, _BODIES_SQL, [options, host]).fetchall()
    if not rows or rows[0][4] != entry[2] or any(body is None for _, _, _, body, _ in rows):
        return None
    return [_Stored(uuid, path, method, "", body) for uuid, path, method, body, _ in rows]


def stored_for_host(*, host: str, template_name: str | None, version: int | None) -> bytes:
    """GET /gen-test-endpoints' JSON for a host (ordered by path, then method; ``[]`` for an unknown host),
    from stored results where they are valid, generating (and storing) the others. A fixed number of
    queries; with every result stored, one."""
    options = options_key(template_name, version)
    recheck = settings.TESTGEN_STORED_RECHECK_SECONDS
    # The testing environment is not in the key: a trusted read compares its digest (_BODIES_SQL).
    trust = (host.upper(), options, _code_and_settings(options))
    inventory = inventory_version() if recheck > 0 else None  # read before the check it will vouch for
    items = _trusted_bodies(trust, inventory, options, host)
    if items is None:
        # The host as Host.objects.filter(name__iexact=host).first() finds it.
        items = _stamped(_HOST_WHERE, [host], options=options)
        if any(i.body is None for i in items):
            host_id = Endpoint.objects.filter(uuid=items[0].uuid).values_list("host_id", flat=True).first()
            all_missing = all(i.body is None for i in items)
            _generate(items, host_id=host_id if all_missing else None, template_name=template_name,
                      version=version)
        elif items and inventory is not None:
            if len(_trusted) >= _TRUSTED_MAX:
                _trusted.clear()
            _trusted[trust] = (inventory, time.monotonic() + recheck, items[0].environment)
    items.sort(key=lambda i: (i.path, METHOD_ORDER.get(i.method, 99)))
    parts: list = []
    for item in items:
        if item.body is not None:
            parts.extend((b",", *host_item(item)))
    parts[:1] = [b"["]  # the first separator, or the opening of an empty list
    return b"".join((*parts, b"]"))


def stored_for_endpoint(*, endpoint: Endpoint, template_name: str | None, version: int | None) -> bytes:
    """GET /gen-test-endpoint's JSON for one endpoint: the stored result when valid, else generated and stored."""
    get_patterns = None
    if endpoint.method in _READ_BACK_METHODS:
        get_patterns = list(Endpoint.objects.filter(host_id=endpoint.host_id, method="GET")
                            .values_list("path", flat=True))
    items = _stamped("e.uuid = %s", [endpoint.uuid], options=options_key(template_name, version),
                     get_patterns=get_patterns or [], host_where="e.host_id = %s", host_params=[endpoint.host_id])
    if not items:  # deleted meanwhile: answer from the row in hand, as before
        return render(test_generate(endpoint=endpoint, template_name=template_name, version=version))
    _generate(items, host_id=None, template_name=template_name, version=version)
    if items[0].body is None:  # deleted meanwhile
        return render(test_generate(endpoint=endpoint, template_name=template_name, version=version))
    return items[0].body


def test_generate_json(*, endpoint: Endpoint, template_name: str | None = None,
                       version: int | None = None) -> bytes:
    """:func:`~.generation.test_generate`'s result as JSON bytes, stored and reused while valid."""
    if not storing():
        return render(test_generate(endpoint=endpoint, template_name=template_name, version=version))
    return stored_for_endpoint(endpoint=endpoint, template_name=template_name, version=version)


def tests_generate_for_host_json(*, host: str, template_name: str | None = None,
                                 version: int | None = None) -> bytes:
    """:func:`~.generation.tests_generate_for_host`'s answer as JSON bytes, each endpoint's result
    stored and reused while valid: a repeat call is a concatenation of stored JSON."""
    if not storing():
        return render(tests_generate_for_host(host=host, template_name=template_name, version=version))
    return stored_for_host(host=host, template_name=template_name, version=version)


# Named like tests, but they are services: keep pytest from collecting them where imported.
test_generate_json.__test__ = False
