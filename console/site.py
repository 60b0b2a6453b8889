"""The console's admin site: product branding, the dashboard as the index, and the console's own pages
(ingestion health, hosts graph, alert actions from the endpoint page)."""
from django.contrib import admin
from django.urls import path


class ConsoleSite(admin.AdminSite):
    site_header = "apiscope console"
    site_title = "apiscope"
    index_title = "Dashboard"
    index_template = "console/index.html"

    def index(self, request, extra_context=None):
        from .dashboard import dashboard_context

        return super().index(request, {**dashboard_context(request), **(extra_context or {})})

    def get_urls(self):
        from . import views

        ours = [
            path("health/", self.admin_view(views.health_view), name="console-health"),
            path("hosts-graph/", self.admin_view(views.hosts_graph_view), name="console-hosts-graph"),
            path("endpoint/<uuid:endpoint_id>/run-tests/", self.admin_view(views.run_tests_view),
                 name="console-endpoint-run-tests"),
            path("alert/<uuid:alert_id>/<str:action>/", self.admin_view(views.alert_action_view),
                 name="console-alert-action"),
        ]
        return ours + super().get_urls()
