"""No agent input causes a 500 or a failed analysis: mutated captures through the real routes."""
import copy
import random

import pytest

from inventory.models import IngestBatch

from .ingest_support import sample, send

pytestmark = pytest.mark.django_db

ODD_VALUES = [None, 0, -1, 1.5, True, "", " ", "null", "\u0000", "é" * 3, "{", "[]", [], {}, [1, "a"], {"a": {"b": []}},
              "x" * 5000, 10 ** 30, "../../etc/passwd", "http://", "%zz", "a@b", "1234-5678-9012-3456"]


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, (*prefix, index))


def _mutate(trace, rng):
    trace = copy.deepcopy(trace)
    paths = [p for p in _paths(trace) if p]
    for _ in range(rng.randint(1, 4)):
        path = rng.choice(paths)
        node = trace
        try:
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = copy.deepcopy(rng.choice(ODD_VALUES))
        except (KeyError, IndexError, TypeError):
            pass
    return trace


@pytest.mark.parametrize("url,names", [
    ("/api/v1/log-request/batch", ["v1-single-flask-01.json", "v1-single-django-02.json", "v1-single-flask-03.json"]),
    ("/api/v2/log-request/batch", ["v2-batch-flask-01.json", "v2-batch-extra-authcfg-attacks-01.json",
                                   "v2-batch-extra-bodytypes-graphql-04.json"]),
])
def test_mutated_agent_traces_never_cause_a_500(client, django_capture_on_commit_callbacks, url, names):
    rng = random.Random(20260131)
    originals = []
    for name in names:
        data = sample(name)
        originals.extend(data if isinstance(data, list) else [data])
    statuses = set()
    for _ in range(150):
        batch = [_mutate(rng.choice(originals), rng) for _ in range(rng.randint(1, 3))]
        response = send(client, django_capture_on_commit_callbacks, url, batch)
        assert response.status_code in (200, 400, 413), response.content
        statuses.add(response.status_code)
    assert statuses == {200, 400}  # both accepted and refused inputs were produced
    assert not IngestBatch.objects.exclude(status=IngestBatch.Status.DONE).exists()
