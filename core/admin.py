"""Operators' console: API keys (issue from the admin with a scope, change the scope, revoke in bulk),
the Celery queues page."""
from django.contrib import admin, messages
from django.template.response import TemplateResponse
from django.utils import timezone
from kombu.exceptions import OperationalError

from .authentication import key_cache_clear
from .models import AgentKey, ApiKey, TraceDecryptFailure
from .queues import queues_status


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ("name", "scope", "prefix", "created_at", "revoked_at")
    list_filter = ("scope", "revoked_at")
    search_fields = ("name", "prefix")
    # A scope change takes effect on the key's next request (authentication reads it every time).
    fields = ("name", "scope", "prefix", "created_at", "revoked_at")
    readonly_fields = ("prefix", "created_at", "revoked_at")
    actions = ["revoke_selected"]

    def save_model(self, request, obj, form, change):
        if not change:
            # Issue a new key: show it once in a message, store only its hash.
            raw = obj.set_new_key()
            super().save_model(request, obj, form, change)
            messages.warning(request, f"New API key (shown once, copy it now): {raw}")
            return
        super().save_model(request, obj, form, change)

    @admin.action(description="Revoke selected API keys", permissions=["change"])
    def revoke_selected(self, request, queryset):
        count = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        key_cache_clear()  # other processes: within API_KEY_CACHE_SECONDS (at most 1 s)
        self.message_user(request, f"Revoked {count} key(s).")


def queues_admin_view(request):
    """The admin's "Celery queues" page: each declared queue, the tasks waiting in it and the workers
    consuming it, with a warning for each queue whose work nobody consumes. Asks the workers, so
    it takes about a second; reads only."""
    context = {**admin.site.each_context(request), "title": "Celery queues"}
    try:
        queues = queues_status(ask_workers=True)
    except (OperationalError, OSError) as exc:
        context["error"] = type(exc).__name__
    else:
        context.update(queues=queues, unconsumed=[queue for queue in queues if queue.unconsumed])
    return TemplateResponse(request, "core/admin/queues.html", context)


@admin.register(AgentKey)
class AgentKeyAdmin(admin.ModelAdmin):
    """Agent encryption keys: public facts only (the private key is never shown). Made on first use,
    rotated with ``manage.py rotateagentkey``; a previous key may be deleted once unused."""

    list_display = ("fingerprint", "bits", "active", "created_at", "retired_at", "last_used_at")
    fields = ("fingerprint", "bits", "active", "created_at", "retired_at", "last_used_at", "public_pem")
    readonly_fields = fields

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return obj is not None and not obj.active and super().has_delete_permission(request, obj)


@admin.register(TraceDecryptFailure)
class TraceDecryptFailureAdmin(admin.ModelAdmin):
    """Encrypted traces the worker skipped because they could not be decrypted, by reason."""

    list_display = ("reason", "count", "last_at")
    readonly_fields = ("reason", "count", "last_at")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
