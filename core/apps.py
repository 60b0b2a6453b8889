from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "API keys and platform"

    def ready(self) -> None:
        from . import schema  # noqa: F401  (registers the OpenAPI auth extension)
        from config.celery import _ensure_filesystem_broker_dirs

        _ensure_filesystem_broker_dirs()
