"""Operators' console: the global testing environment (one row; the token is write-only here)."""
from __future__ import annotations

from django import forms
from django.contrib import admin

from console.masking import SecretsMaskedAdmin
from core.masking import url_masked

from .crypto import InvalidToken, secret_decrypt
from .models import GLOBAL_ENV_KEY, TestingEnvironment, TestRun, TestRunResult
from .serializers import GlobalEnvSerializer
from .services import AuthTokenUnreadable, global_env_set, identities_stored

# Serializer (wire) name of each form field, for showing validation errors where they belong.
_WIRE_TO_FORM = {"baseUrl": "base_url", "authToken": "auth_token", "testUserId": "test_user_id",
                 "timeout": "timeout_ms", "retries": "retries", "headers": "headers"}


class TestingEnvironmentForm(forms.ModelForm):
    """Validated by the API's serializer, so the admin and PUT /testing/global-env accept the same values."""

    auth_token = forms.CharField(
        required=False, strip=False, widget=forms.PasswordInput(render_value=False),
        help_text="Sent as the credential header value, e.g. 'Bearer eyJ…'. Stored encrypted. "
                  "Leave empty to keep the current token. {{env.NAME}} is read only by run_security_tests, "
                  "for names in TESTING_ENV_ALLOWLIST; runs started through the API fail on it.",
    )
    clear_auth_token = forms.BooleanField(required=False, help_text="Remove the stored token.")

    class Meta:
        model = TestingEnvironment
        fields = ["base_url", "auth_token", "clear_auth_token", "test_user_id", "timeout_ms", "retries", "headers",
                  "extra"]

    def clean(self):
        cleaned = super().clean()
        wire: dict = {"baseUrl": cleaned.get("base_url") or ""}
        token = cleaned.get("auth_token") or ""
        if not token and not cleaned.get("clear_auth_token") and self.instance.pk and self.instance.auth_token_encrypted:
            try:
                token = secret_decrypt(self.instance.auth_token_encrypted)
            except InvalidToken:
                self.add_error("auth_token", "The stored token cannot be decrypted with the current key: "
                                             "enter it again or clear it.")
        if token:
            wire["authToken"] = token
        for form_name, wire_name in (("test_user_id", "testUserId"), ("timeout_ms", "timeout"),
                                     ("retries", "retries"), ("headers", "headers")):
            if cleaned.get(form_name) not in (None, ""):
                wire[wire_name] = cleaned[form_name]
        extra = cleaned.get("extra") or {}
        if not isinstance(extra, dict):
            self.add_error("extra", "Expected an object of name: value.")
            return cleaned
        wire.update(extra)
        # Identities, login recipes, cookies and the run scope (exclude, allowDestructive) are set through the
        # API only; saving here keeps them.
        if self.instance.pk:
            for wire_name, stored in (("exclude", self.instance.exclude),
                                      ("allowDestructive", self.instance.allow_destructive)):
                if stored is not None:
                    wire[wire_name] = stored
            try:
                wire.update(identities_stored(self.instance))
            except AuthTokenUnreadable:
                self.add_error(None, "The stored identities cannot be decrypted with the current key: "
                                     "set them again through PUT /api/v1/testing/global-env.")
        # Operators may store {{env.NAME}} (read by run_security_tests only); the API refuses it.
        serializer = GlobalEnvSerializer(data=wire, context={"allow_env_placeholders": True})
        if not serializer.is_valid():
            for wire_name, errors in serializer.errors.items():
                field = _WIRE_TO_FORM.get(wire_name, "extra" if wire_name != "non_field_errors" else None)
                for error in errors if isinstance(errors, list) else [errors]:
                    self.add_error(field, f"{wire_name}: {error}" if field == "extra" else str(error))
        else:
            self.wire_values = serializer.validated_data
        return cleaned


@admin.register(TestingEnvironment)
class TestingEnvironmentAdmin(SecretsMaskedAdmin, admin.ModelAdmin):
    # As GET /testing/global-env shows them to read keys (core.masking: one rule); extra keys are top-level keys there.
    masked_fields = {"base_url": "baseUrl", "headers": "headers", "extra": None}
    form = TestingEnvironmentForm
    list_display = ("base_url", "test_user_id", "token_set", "timeout_ms", "retries", "updated_at")
    readonly_fields = ("token_set", "updated_at")
    fieldsets = (
        (None, {"fields": ("base_url", "test_user_id")}),
        ("Credentials", {"fields": ("token_set", "auth_token", "clear_auth_token")}),
        ("Requests", {"fields": ("timeout_ms", "retries", "headers")}),
        ("Custom placeholders", {"fields": ("extra",),
                                 "description": "Each name: value pair is usable as {{name}} in tests."}),
        (None, {"fields": ("updated_at",)}),
    )

    @admin.display(boolean=True, description="token set")
    def token_set(self, obj: TestingEnvironment) -> bool:
        return obj.has_auth_token

    def has_add_permission(self, request) -> bool:
        return super().has_add_permission(request) and not TestingEnvironment.objects.exists()

    def save_model(self, request, obj, form, change):
        global_env_set(values=form.wire_values)
        saved = TestingEnvironment.objects.get(key=GLOBAL_ENV_KEY)
        obj.pk = saved.pk
        obj.refresh_from_db()


class TestRunResultInline(admin.TabularInline):
    model = TestRunResult
    extra = 0
    can_delete = False
    fields = ("outcome", "template_name", "method", "endpoint", "host", "message", "num_requests", "duration_ms")
    readonly_fields = fields

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(TestRun)
class TestRunAdmin(SecretsMaskedAdmin, admin.ModelAdmin):
    """Runs from the API and the command, with each test's outcome (read-only)."""

    list_display = ("created_at", "status", "source", "host", "endpoint", "template_name", "num_tests", "num_passed",
                    "num_failed", "num_errors", "num_inconclusive")
    list_filter = ("status", "source", "template_name")
    search_fields = ("host", "endpoint")
    inlines = [TestRunResultInline]
    readonly_fields = ("uuid", "status", "source", "host", "endpoint", "method", "template_name", "template_version",
                       "base_url", "num_tests", "num_passed", "num_failed", "num_errors", "num_inconclusive", "num_not_generated", "error",
                       "created_at", "started_at", "finished_at")
    fields = readonly_fields
    masked_fields = {"base_url": url_masked}

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
