from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "API keys and platform"

    def ready(self) -> None:
        from config.celery import _ensure_filesystem_broker_dirs

        _ensure_filesystem_broker_dirs()
