"""Test generation data: the global testing environment (and the record of test runs).

The testing environment is what generated tests run against (SPEC "Global testing
environment"): one row, key ``global``. ``authToken`` is stored encrypted
(``testgen.crypto``); every other value in clear. ``None`` means "not set": the
API shows only the keys that were set, the runner applies its defaults.
"""
from __future__ import annotations

from django.db import models
from django.utils import timezone

GLOBAL_ENV_KEY = "global"


class TestingEnvironment(models.Model):
    """The environment generated tests run against: target, credentials, request options.

    ``extra`` holds operator-defined string values, each usable as a ``{{name}}``
    placeholder in tests. ``auth_token_encrypted`` is a Fernet token ("" = unset);
    read it through ``testgen.services.global_env_read``, never directly.
    """

    __test__ = False  # not a pytest test class, despite the name

    key = models.CharField(max_length=32, unique=True, default=GLOBAL_ENV_KEY, editable=False)
    base_url = models.CharField(max_length=2048)
    auth_token_encrypted = models.TextField(blank=True, default="", editable=False)
    test_user_id = models.CharField(max_length=255, null=True, blank=True)
    timeout_ms = models.PositiveIntegerField(null=True, blank=True, help_text="Per-request timeout in milliseconds.")
    retries = models.PositiveSmallIntegerField(null=True, blank=True, help_text="Retries on connection errors.")
    headers = models.JSONField(null=True, blank=True, help_text="Headers sent with every test request.")
    extra = models.JSONField(default=dict, blank=True, help_text="Custom placeholder values: name to string.")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "testing environment"

    def __str__(self) -> str:
        return f"Testing environment ({self.base_url})"

    @property
    def has_auth_token(self) -> bool:
        return bool(self.auth_token_encrypted)
