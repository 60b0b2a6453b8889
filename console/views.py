"""The console's own pages (routed by ``console.site.ConsoleSite.get_urls``, behind the admin login)."""
from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme

from core.errors import AlertNotFound, ApiError, ConflictError
from detections.services import UpdateType, alert_update
from inventory.api.services import hosts_graph
from inventory.counts import inventory_changed
from inventory.models import Endpoint

from .health import health_read
from .svg import graph_drawn, hosts_graph_svg

ACTIONS = {"resolve": UpdateType.RESOLVE, "ignore": UpdateType.IGNORE,
           "reopen-resolved": UpdateType.UNRESOLVE, "reopen-ignored": UpdateType.UNIGNORE}


def health_view(request):
    """Ingestion health (console/health.py). Asks the workers: about a second."""
    context = {**admin.site.each_context(request), "title": "Ingestion health", "health": health_read()}
    return TemplateResponse(request, "console/health.html", context)


def hosts_graph_view(request):
    graph = hosts_graph()
    drawn = graph_drawn(graph)
    context = {**admin.site.each_context(request), "title": "Hosts graph", "graph": graph,
               "svg": hosts_graph_svg(drawn), "drawn": len(drawn["hosts"]), "total": len(graph["hosts"])}
    return TemplateResponse(request, "console/hosts_graph.html", context)


def alert_action_view(request, alert_id, action: str):
    """POST: resolve, ignore or reopen one alert (the endpoint page's buttons); back to ``next``."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    if not request.user.has_perm("detections.change_alert"):
        raise PermissionDenied
    if action not in ACTIONS:
        messages.error(request, f"Unknown action {action!r}.")
    else:
        try:
            alert = alert_update(alert_id=alert_id, update_type=ACTIONS[action],
                                 resolution_message=request.POST.get("message") or None)
        except (AlertNotFound, ConflictError) as exc:
            messages.error(request, f"Alert not changed: {exc.body}")
        else:
            inventory_changed()  # the dashboard's cached open-alert counts
            messages.success(request, f"Alert is now {alert.status}.")
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        target = reverse("admin:detections_alert_changelist")
    return HttpResponseRedirect(target)


def run_tests_view(request, endpoint_id):
    """POST: start a run of the endpoint's generated tests (the runs API's service); to the run's page."""
    from testgen.services.runs import test_run_start

    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    if not request.user.has_perm("testgen.add_testrun"):
        raise PermissionDenied
    endpoint = get_object_or_404(Endpoint.objects.select_related("host"), uuid=endpoint_id)
    try:
        run = test_run_start(host=endpoint.host.name, endpoint=endpoint.path, method=endpoint.method)
    except ApiError as exc:
        messages.error(request, f"Tests not started: {exc.body}")
        return HttpResponseRedirect(reverse("admin:inventory_endpoint_change", args=[endpoint.pk]))
    messages.success(request, "Test run started; its results appear here and on the endpoint page.")
    return HttpResponseRedirect(reverse("admin:testgen_testrun_change", args=[run.pk]))
