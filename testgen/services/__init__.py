"""What the testgen app does: generate tests, keep the testing environment, run tests."""
from .environment import (
    AuthTokenUnreadable,
    RunEnvironment,
    global_env_clear,
    global_env_read,
    global_env_set,
    identities_stored,
    run_environment_load,
)
from .generation import NO_TEMPLATE, endpoint_find, test_generate, tests_generate_for_host
from .run_policy import RunRefused
from .stored import test_generate_json, tests_generate_for_host_json
from .runs import (
    NO_ENVIRONMENT,
    test_run_cli,
    test_run_execute,
    test_run_record,
    test_run_start,
    test_runs_sweep,
    tests_collect,
)

__all__ = [
    "NO_ENVIRONMENT",
    "NO_TEMPLATE",
    "RunRefused",
    "test_run_cli",
    "test_run_execute",
    "test_run_record",
    "test_run_start",
    "test_runs_sweep",
    "tests_collect",
    "AuthTokenUnreadable",
    "RunEnvironment",
    "endpoint_find",
    "global_env_clear",
    "global_env_read",
    "global_env_set",
    "identities_stored",
    "run_environment_load",
    "test_generate",
    "test_generate_json",
    "tests_generate_for_host",
    "tests_generate_for_host_json",
]
