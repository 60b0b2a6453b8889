"""Learned parameterisation judged on a labelled set shaped after real APIs (tests/inventory/fixtures/
path_families.txt: GitHub, Stripe, Azure ARM, Kubernetes, Twitter/X, Shopify, crAPI, VAmPI, blogs,
registries). The figures are published in docs/inventory.md ("Learned parameterisation: accuracy")."""
from .learning_accuracy import baseline, predict, samples_load, score


def test_the_labelled_set_is_large_enough_and_well_formed():
    samples, families = samples_load()
    assert families >= 150 and len(samples) >= 300
    assert len({s.host for s in samples}) >= 10


def test_precision_and_recall_of_learned_parameterisation():
    samples, families = samples_load()
    learned, plain = score(samples, families), baseline(samples, families)
    assert learned.precision >= 0.97, learned.mistakes
    assert learned.recall >= 0.75
    assert learned.recall > plain.recall + 0.4  # learning finds what ingestion's shape rules cannot


def test_the_traps_of_the_set_stay_literal():
    samples, families = samples_load()
    final = predict(samples)

    def pattern(host, path, method="GET"):
        return final[(host, method, path)]

    shop = "api.example-shop.com"
    for status in ("pending", "shipped", "delivered", "cancelled", "returned"):
        assert pattern(shop, f"/api/v1/orders/{status}") == f"/api/v1/orders/{status}"
    for collection in ("users", "orders", "products", "invoices", "refunds", "wishlists"):
        assert pattern(shop, f"/api/v1/{collection}") == f"/api/v1/{collection}"
    for namespace in ("Compute", "Network", "Storage", "Web", "KeyVault"):
        path = f"/providers/Microsoft.{namespace}/operations"
        assert pattern("management.azure.com", path) == path
    assert pattern(shop, "/api/v1/payment/history") == "/api/v1/payment/history"
    assert pattern(shop, "/api/v1/payment/id7") == "/api/v1/payment/{param1}"
    assert pattern("vampi.example.com", "/users/v1/_debug") == "/users/v1/_debug"
    assert pattern("vampi.example.com", "/users/v1/john.doe") == "/users/v1/{param1}"
    assert pattern("api.twitter.com", "/2/users/me") == "/2/users/me"
    assert pattern("www.example-blog.com", "/static/vendor.bundle.js") == "/static/{param1}"
    assert pattern("k8s.cluster.internal", "/api/v1/namespaces/monitoring/pods/prometheus-0") == \
        "/api/v1/namespaces/{param1}/pods/{param2}"
