"""What the testgen app does: generate tests, keep the testing environment, run tests."""
from .environment import (
    AuthTokenUnreadable,
    RunEnvironment,
    global_env_clear,
    global_env_read,
    global_env_set,
    run_environment_load,
)
from .generation import NO_TEMPLATE, endpoint_find, test_generate, tests_generate_for_host

__all__ = [
    "NO_TEMPLATE",
    "AuthTokenUnreadable",
    "RunEnvironment",
    "endpoint_find",
    "global_env_clear",
    "global_env_read",
    "global_env_set",
    "run_environment_load",
    "test_generate",
    "tests_generate_for_host",
]
