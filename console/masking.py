"""Secrets masked in the console for users who may only look (the read-only operators' group).

A user sees a model's secrets in clear when they hold that model's Django "change" permission (as
``admin`` API keys do in the API); anyone else is shown what a ``read`` key gets from the API
(``core.masking``). The masks are applied to the objects a page shows (list and change page), never
saved: such a user cannot save."""
from __future__ import annotations

from collections.abc import Callable


def sees_secrets(request, model) -> bool:
    opts = model._meta
    return request.user.has_perm(f"{opts.app_label}.change_{opts.model_name}")


class SecretsMaskedAdmin:
    """ModelAdmin mixin: ``masked_fields`` maps a field name to the function that masks its value."""

    masked_fields: dict[str, Callable] = {}

    def _mask(self, request, objects) -> None:
        if sees_secrets(request, self.model):
            return
        for obj in objects:
            for name, mask in self.masked_fields.items():
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
