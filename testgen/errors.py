"""SPEC's special error bodies of the test generation routes."""
from rest_framework import status

from core.errors import ApiError


class NoEndpointSpecified(ApiError):
    """``400 "No endpoint specified."``: gen-test-endpoint without ``endpoint``,
    gen-test-endpoints without ``host`` (SPEC's error table uses the same text for both)."""

    status_code = status.HTTP_400_BAD_REQUEST
    body = "No endpoint specified."


class TestEndpointNotFound(ApiError):
    """``404 {"success": false, "msg": "Could not find endpoint."}``."""

    __test__ = False
    status_code = status.HTTP_404_NOT_FOUND

    def __init__(self):
        super().__init__({"success": False, "msg": "Could not find endpoint."})


class TestRunNotFound(ApiError):
    """``404 "Test run does not exist."`` for an unknown or malformed run id."""

    __test__ = False
    status_code = status.HTTP_404_NOT_FOUND
    body = "Test run does not exist."
