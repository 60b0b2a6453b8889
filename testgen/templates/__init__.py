"""Security test templates.

Every module of this package whose name does not start with ``_`` is imported
at start-up; each registers its template class(es) with ``@register``. Adding a
template is adding one module: a :class:`SecurityTemplate` subclass with a
``name``, ``version``, ``priority`` (automatic selection order, lowest first),
``applies(profile)`` and ``generate(profile, context)``.
"""
from __future__ import annotations

import importlib
import pkgutil

from ._base import GenerationContext, SecurityTemplate, register, registry

__all__ = [
    "GenerationContext",
    "SecurityTemplate",
    "register",
    "template_get",
    "template_names",
    "templates_by_priority",
]


def _discover() -> None:
    for module in pkgutil.iter_modules(__path__):
        if not module.name.startswith("_"):
            importlib.import_module(f"{__name__}.{module.name}")


_discover()


def templates_by_priority() -> list[SecurityTemplate]:
    """The newest version of every template, in automatic selection order."""
    latest = [versions[max(versions)] for versions in registry().values()]
    return sorted(latest, key=lambda t: (t.priority, t.name))


def template_names() -> list[str]:
    return [t.name for t in templates_by_priority()]


def template_get(name: str, version: int | None = None) -> SecurityTemplate | None:
    """A template by name, at ``version`` (the newest when ``None``); ``None`` when unknown."""
    versions = registry().get(name)
    if not versions:
        return None
    return versions.get(max(versions) if version is None else version)


def template_versions(name: str) -> list[int]:
    return sorted(registry().get(name, {}))
