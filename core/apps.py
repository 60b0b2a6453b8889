from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "API keys and platform"

    def ready(self) -> None:
        from . import schema  # noqa: F401  (registers the OpenAPI auth extension)
        from config.celery import _ensure_filesystem_broker_dirs

        _ensure_filesystem_broker_dirs()

        from django.db.models.signals import post_save

        from .authentication import key_cache_clear
        from .models import ApiKey

        # A key saved here (revoked, re-scoped, re-issued) is looked up again at once in this process.
        post_save.connect(key_cache_clear, sender=ApiKey, dispatch_uid="core-api-key-cache")
