"""The Celery application: worker and beat run trace analysis, webhook delivery and pruning."""
import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("apiscope")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def _ensure_filesystem_broker_dirs() -> None:
    """The embedded filesystem broker needs its folders before the first message."""
    from django.conf import settings

    options = getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", {})
    if settings.CELERY_BROKER_URL.startswith("filesystem://"):
        for key in ("data_folder_in", "data_folder_out", "processed_folder", "control_folder"):
            if options.get(key):
                os.makedirs(options[key], exist_ok=True)


@app.on_after_configure.connect
def _on_configure(sender, **kwargs) -> None:  # noqa: ARG001
    _ensure_filesystem_broker_dirs()
