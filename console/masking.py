"""Secrets masked in the console for users who may only look (the read-only operators' group).

A user sees a model's secrets in clear when they hold that model's Django "change" permission (as
``admin`` API keys do in the API); anyone else is shown what a ``read`` key gets from the API, with
the API's one rule (``core.masking``): each masked field names the field of the API's answer it is
(``masked_fields``), and its value is masked as the API masks that field (``field_masked``); a URL
field names ``url_masked`` itself. The masks are applied to the objects a page shows (list and change
page), never saved: such a user cannot save."""
from __future__ import annotations

from collections.abc import Callable

from core.masking import field_masked, secrets_masked


def sees_secrets(request, model) -> bool:
    opts = model._meta
    return request.user.has_perm(f"{opts.app_label}.change_{opts.model_name}")


def masker(wire: str | Callable | None) -> Callable:
    """The mask of a field shown as ``wire`` in the API's answer: that field's rule (``field_masked``);
    ``None``: the value holds top-level fields of the answer (``secrets_masked``); a callable: itself."""
    if callable(wire):
        return wire
    if wire is None:
        return secrets_masked
    return lambda value: field_masked(wire, value)


class SecretsMaskedAdmin:
    """ModelAdmin mixin: ``masked_fields`` maps a model field to the API field it is shown as (or to
    ``None`` / a masking function, see :func:`masker`)."""

    masked_fields: dict[str, str | Callable | None] = {}

    def _mask(self, request, objects) -> None:
        if sees_secrets(request, self.model):
            return
        masks = {name: masker(wire) for name, wire in self.masked_fields.items()}
        for obj in objects:
            for name, mask in masks.items():
                value = getattr(obj, name, None)
                if value:
                    setattr(obj, name, mask(value))

    def get_object(self, request, object_id, from_field=None):
        obj = super().get_object(request, object_id, from_field)
        if obj is not None:
            self._mask(request, [obj])
        return obj

    def get_changelist_instance(self, request):
        changelist = super().get_changelist_instance(request)
        self._mask(request, changelist.result_list)
        return changelist
