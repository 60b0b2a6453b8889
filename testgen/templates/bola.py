"""BOLA (broken object level authorization): the test user's token must not reach other users' objects.

The identifier tested is, in order of preference: a path parameter following a
user-like collection (``/users/{param1}``), a user-like query parameter
(``userId``), the last path parameter, a query identifier (``id``, ``*_id``,
``*Id``, ``*uuid``). Requests, all with the test user's token:

* when the identifier is user-like: the test user's own object (``{{testUserId}}``),
  which must be readable (status below 400) - otherwise the token or the
  environment is wrong and a pass would mean nothing;
* up to three other object ids seen in traffic (each on the concrete path it was
  seen on), each skipped when it is the test user's own id; with fewer than two
  seen, also ``{{otherObjectId}}`` (an environment key; skipped when not set).
  Each must be answered 401, 403 or 404.

For DELETE endpoints the own-object request is left out (it would delete it).
"""
from __future__ import annotations

import re

from ..profile import EndpointProfile, Input
from ._base import GenerationContext, SecurityTemplate, assertion, build_request, register

USER_QUERY = re.compile(r"^(user|account|customer|member|profile|owner|person)[_-]?(id|uuid)?$", re.I)
ID_QUERY = re.compile(r"(^(id|uid|uuid|guid)$)|([_-](id|uuid)$)|([a-z0-9](Id|ID|Uuid)$)")
DENIED = [401, 403, 404]
MAX_OTHERS = 3


def identifier(profile: EndpointProfile) -> tuple[Input, bool] | None:
    """The identifier input to test and whether it names a user."""
    user_position = profile.user_path_position()
    for item in profile.path_inputs:
        if item.key == user_position:
            return item, True
    for item in profile.query_inputs:
        if USER_QUERY.match(item.name):
            return item, True
    if profile.path_inputs:
        return profile.path_inputs[-1], False
    for item in profile.query_inputs:
        if ID_QUERY.search(item.name):
            return item, False
    return None


@register
class Bola(SecurityTemplate, name="BOLA", priority=10, title="Broken object level authorization"):
    def applies(self, profile: EndpointProfile) -> bool:
        return profile.is_authenticated and identifier(profile) is not None

    def _request_for(self, profile: EndpointProfile, item: Input, value: str, description: str, **ext) -> dict:
        if item.location == "path":
            segments = profile.observed_path_for(item.key, value) or list(profile.segments)
            segments = list(segments)
            segments[item.key] = value
            return build_request(profile, description, segments=segments, **ext)
        return build_request(profile, description, query={**profile.query, item.name: value}, **ext)

    def generate(self, profile: EndpointProfile, context: GenerationContext) -> dict:
        item, user_like = identifier(profile)
        label = f"path parameter '{item.name}'" if item.location == "path" else f"query parameter '{item.name}'"
        requests: list[dict] = []
        assertions: list[dict] = []
        # The own-object check is skipped for DELETE: it would delete the test user's object.
        if user_like and profile.method != "DELETE":
            requests.append(self._request_for(profile, item, "{{testUserId}}",
                                              "The test user's own object, with the test user's token"))
            assertions.append(assertion("status", "lessThan", 400, request=0, precondition=True,
                                        description="The test user can read their own object (sanity check)"))
        if item.location == "path":
            seen = profile.observed_values(item.key)
        else:
            seen = [item.example] if item.example else []
        others = [v for v in seen if v and not v.startswith("{{")][:MAX_OTHERS]
        for value in others:
            requests.append(self._request_for(
                profile, item, value, f"Another object ({label} = {value}) with the test user's token",
                skipIfEquals=["{{testUserId}}", value] if user_like else None,
            ))
        if len(others) < 2:
            requests.append(self._request_for(
                profile, item, "{{otherObjectId}}",
                f"Another object ({label} = {{{{otherObjectId}}}}) with the test user's token", optional=True,
            ))
        first_other = 1 if user_like and profile.method != "DELETE" else 0
        for index in range(first_other, len(requests)):
            assertions.append(assertion("status", "in", DENIED, request=index,
                                        description="Another user's object is not served to the test user"))
        return self.test_config(
            profile,
            description=(
                f"{profile.method} {profile.path}: with the test user's token, objects of other users "
                f"(by {label}) must be refused with 401, 403 or 404."
            ),
            requests=requests,
            assertions=assertions,
        )
