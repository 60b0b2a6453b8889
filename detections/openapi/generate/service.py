"""Generated specs kept current: naming, building, storing, and the debounced refresh (DECISIONS §10).

Flow: an analysis that created endpoints or new or changed data fields calls
:func:`generated_specs_touch`; after its commit the hosts are marked stale (``GeneratedSpecState``,
only when not stale already) and one refresh task per newly stale host is published with a
countdown of ``OPENAPI_GENERATE_DEBOUNCE`` seconds: a burst of traffic makes one rebuild. The task
claims the host (clears ``stale_since``), builds, validates (``openapi-spec-validator``) and stores
the document (unchanged text: no write). Beat's sweep (``generated_specs_sweep``) re-publishes lost
refreshes, builds hosts that never had a spec, and marks stale the hosts whose endpoints an operator
changed (``updated_at``) and, at most every ``OPENAPI_GENERATE_MAX_AGE`` seconds, those with traffic
since their last build (enums, required keys and examples come from sampled traces).
"""
from __future__ import annotations

import hashlib
import logging
import re
import time
from datetime import timedelta
from functools import partial

import orjson
from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from core.errors import ApiError
from inventory.models import Endpoint, Host

from ...models import GeneratedSpecState, OpenApiSpec
from .collect import host_facts
from .document import OPENAPI_VERSION, document_build
from .operation import template

logger = logging.getLogger(__name__)

SUFFIX = "-generated"
MAX_NAME = 128


def generated_spec_name(host: str, *, taken: bool = False) -> str:
    """``<host>-generated`` with characters outside ``[A-Za-z0-9._-]`` replaced by ``-`` (leading
    ``-``/``.`` dropped); a name too long, or ``taken`` by another spec, gets a digest of the host."""
    base = re.sub(r"[^A-Za-z0-9._-]", "-", host).lstrip("-.") or "host"
    name = base + SUFFIX
    if taken or len(name) > MAX_NAME:
        digest = hashlib.sha256(host.encode()).hexdigest()[:8]
        name = f"{base[:MAX_NAME - len(SUFFIX) - 9]}-{digest}{SUFFIX}"
    return name


def generated_document(host: Host) -> dict:
    """Build the document of ``host`` now from its inventory (no storage, no validation)."""
    return document_build(host_facts(host))


def document_text(document: dict, *, indent: bool = False) -> str:
    """The document as JSON text: compact as stored and served (a large host's spec is megabytes),
    indented for ``export_openapi``."""
    return orjson.dumps(document, option=orjson.OPT_INDENT_2 if indent else 0).decode()


def generated_spec_store(host: Host, document: dict) -> OpenApiSpec | None:
    """Store (or update) the host's generated spec; deletes it when the document has no path."""
    if not document.get("paths"):
        OpenApiSpec.objects.filter(source_host=host).delete()
        return None
    text = document_text(document)
    with transaction.atomic():
        spec = OpenApiSpec.objects.select_for_update().filter(source_host=host).first()
        if spec is not None:
            if spec.text != text:
                spec.text, spec.spec, spec.updated_at = text, document, timezone.now()
                spec.hosts = [host.name]
                spec.save(update_fields=["text", "spec", "hosts", "updated_at"])
            return spec
        name = generated_spec_name(host.name)
        if OpenApiSpec.objects.filter(name=name).exists():
            name = generated_spec_name(host.name, taken=True)
        return OpenApiSpec.objects.create(
            name=name, text=text, spec=document, extension=OpenApiSpec.Extension.JSON,
            openapi_version=OPENAPI_VERSION, hosts=[host.name], is_auto_generated=True, source_host=host,
        )


def generated_spec_refresh(*, host_id: int, force: bool = False) -> OpenApiSpec | None:
    """Rebuild one host's generated spec if it is stale (any time with ``force``). A second run of
    the same message finds nothing to claim and returns None; so does a host that is gone."""
    now = timezone.now()
    claimed = GeneratedSpecState.objects.filter(host_id=host_id)
    if not force:
        claimed = claimed.filter(stale_since__isnull=False)
    if not claimed.update(stale_since=None, built_from=now):
        if not force or not Host.objects.filter(id=host_id).exists():
            return None
        GeneratedSpecState.objects.get_or_create(host_id=host_id, defaults={"built_from": now})
    host = Host.objects.filter(id=host_id).first()
    if host is None:
        return None
    started = time.process_time()
    document = generated_document(host)
    seconds = time.process_time() - started
    error = ""
    stored = OpenApiSpec.objects.filter(source_host=host).values_list("text", flat=True).first()
    if document.get("paths") and stored != document_text(document):  # unchanged: validated when stored
        try:
            from ...specs import openapi_validate

            openapi_validate(document)
        except ApiError as exc:  # a bug of ours: keep the previous document, say why
            error = str(getattr(exc, "issues", exc))[:2000]
            logger.error("generated spec of host %s is invalid; previous kept", host_id)
    spec = None if error else generated_spec_store(host, document)
    GeneratedSpecState.objects.filter(host_id=host_id).update(build_seconds=seconds, error=error)
    logger.info("generated spec of host %s built in %.3f s CPU (%d paths)", host_id, seconds,
                len(document.get("paths") or {}))
    return spec


def generated_specs_touch(matched, fields) -> None:
    """Pipeline hook, inside the analysis transaction: after commit, mark stale the hosts of the
    endpoints that were created or got new or changed data fields (``fields``: its ``FieldState``)."""
    changed = {key[0] for key, row in fields.rows.items() if row.new or row.changed}
    host_ids = {endpoint.host.id for _, endpoint in matched if endpoint.created or endpoint.uuid in changed}
    if host_ids:
        transaction.on_commit(partial(_mark_safely, sorted(host_ids)))


def _mark_safely(host_ids: list[int]) -> None:
    try:
        generated_specs_mark_stale(host_ids=host_ids)
    except Exception:  # noqa: BLE001 - the sweep catches up; the analysis is committed already
        logger.warning("marking %d host(s) for spec generation failed; the sweep will", len(host_ids), exc_info=True)


def generated_specs_mark_stale(*, host_ids) -> list[int]:
    """Mark hosts stale (those not stale already) and publish their debounced refresh; returns them."""
    from ...tasks import generated_spec_refresh_task

    ids = sorted(set(host_ids))
    if not ids:
        return []
    now = timezone.now()
    existing = set(GeneratedSpecState.objects.filter(host_id__in=ids).values_list("host_id", flat=True))
    missing = [i for i in ids if i not in existing]
    new = sorted(Host.objects.filter(id__in=missing).values_list("id", flat=True)) if missing else []
    GeneratedSpecState.objects.bulk_create([GeneratedSpecState(host_id=i, stale_since=now) for i in new],
                                           ignore_conflicts=True)
    fresh = list(GeneratedSpecState.objects.filter(host_id__in=existing, stale_since__isnull=True)
                 .values_list("host_id", flat=True))
    GeneratedSpecState.objects.filter(host_id__in=fresh, stale_since__isnull=True).update(stale_since=now)
    marked = sorted({*new, *fresh})
    for host_id in marked:
        transaction.on_commit(partial(generated_spec_refresh_task.apply_async, (host_id,),
                                      countdown=settings.OPENAPI_GENERATE_DEBOUNCE))
    return marked


def generated_specs_sweep(*, now=None) -> dict[str, int]:
    """Beat: (1) re-publish refreshes stale for longer than the debounce plus a minute (a lost
    message); (2) mark stale the hosts that have endpoints but were never built, whose endpoints
    changed since their last build, or that had traffic since a build older than the maximum age."""
    from ...tasks import generated_spec_refresh_task

    now = now or timezone.now()
    debounce = settings.OPENAPI_GENERATE_DEBOUNCE
    lost = list(GeneratedSpecState.objects.filter(stale_since__lt=now - timedelta(seconds=debounce + 60))
                .values_list("host_id", flat=True)[:1000])
    for host_id in lost:
        generated_spec_refresh_task.delay(host_id)
    state = "host__generated_spec_state"
    never = Endpoint.objects.filter(**{f"{state}__isnull": True})
    changed = Endpoint.objects.filter(**{f"{state}__stale_since__isnull": True}).filter(
        Q(**{f"{state}__built_from__isnull": True}) | Q(updated_at__gt=F(f"{state}__built_from"))
        | Q(last_active__gt=F(f"{state}__built_from"),
            **{f"{state}__built_from__lt": now - timedelta(seconds=settings.OPENAPI_GENERATE_MAX_AGE)})
    )
    hosts = {*never.values_list("host_id", flat=True).distinct()[:1000],
             *changed.values_list("host_id", flat=True).distinct()[:1000]}
    marked = generated_specs_mark_stale(host_ids=hosts)
    return {"republished": len(lost), "marked": len(marked)}


def generated_spec_excerpt(*, host_id: int, pattern: str) -> dict | None:
    """The host's generated document cut down to one endpoint's path (its ``openapi``, ``info``,
    ``servers``, ``components`` and that path item), or None when the host has none. One query; the
    database extracts the parts, so a detail read never loads a large host's whole document."""
    from django.db.models.fields.json import KeyTransform

    key, _ = template(pattern)
    parts = ("openapi", "info", "servers", "components")
    row = (OpenApiSpec.objects.filter(source_host_id=host_id, is_auto_generated=True)
           .annotate(**{f"part_{p}": KeyTransform(p, "spec") for p in parts},
                     item=KeyTransform(key, KeyTransform("paths", "spec")))
           .values_list(*(f"part_{p}" for p in parts), "item").first())
    if row is None:
        return None
    excerpt = {p: value for p, value in zip(parts, row[:-1]) if value is not None}
    excerpt["paths"] = {key: row[-1]} if isinstance(row[-1], dict) else {}
    return excerpt
