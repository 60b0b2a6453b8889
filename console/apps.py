"""Two app configs: the admin with the console's site as its default site (every ``admin.register``
of the other apps lands on it), and the console app itself (templates, the operators' group)."""
from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class ConsoleAdminConfig(admin_apps.AdminConfig):
    default = False
    default_site = "console.site.ConsoleSite"


class ConsoleConfig(AppConfig):
    default = True
    name = "console"
    verbose_name = "Console"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate

        from .operators import operators_group_sync

        # After the last app's permissions exist (each app's are made by its own post_migrate).
        post_migrate.connect(operators_group_sync)
