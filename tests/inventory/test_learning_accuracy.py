"""Learned parameterisation judged on a labelled set shaped after real APIs (tests/inventory/fixtures/
path_families.txt: GitHub, Stripe, Azure ARM, Kubernetes, Twitter/X, Shopify, crAPI, VAmPI, blogs,
registries). The figures are published in docs/inventory.md ("Learned parameterisation: accuracy")."""
from .learning_accuracy import _part, baseline, predict, samples_load, score


def test_the_labelled_set_is_large_enough_and_well_formed():
    samples, families = samples_load()
    assert families >= 300 and len(samples) >= 500
    assert len({s.host for s in samples}) >= 10
    word_rows = {(s.host, s.method, s.truth) for s in samples if s.word_routes}
    assert len(word_rows) >= 100  # issue #25: word routes from GitHub, Stripe, Kubernetes, Shopify, Slack
    assert {s.host for s in samples if s.word_routes} >= {"api.github.com", "api.stripe.com", "k8s.cluster.internal",
                                                          "shop.myshopify.com", "slack.com"}


def test_precision_and_recall_of_learned_parameterisation():
    samples, families = samples_load()
    learned, plain = score(samples, families), baseline(samples, families)
    assert learned.precision >= 0.98, learned.mistakes
    assert learned.recall >= 0.44
    assert learned.recall > plain.recall + 0.15  # learning finds what ingestion's shape rules cannot
    # Word routes (siblings answering alike): learning merges none of them but Slack's chat.* methods.
    words = _part(learned, samples, [s for s in samples if s.word_routes], families)
    assert words.precision >= 0.9 and words.fp <= 3, learned.mistakes


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
    # Dictionary words are never learned values (DECISIONS §9 amended): namespaces named `default` or
    # `monitoring`, word sub-resources answering alike, Shopify's actions on an order.
    k8s = "k8s.cluster.internal"
    assert pattern(k8s, "/api/v1/namespaces/monitoring/pods/prometheus-0") == \
        "/api/v1/namespaces/monitoring/pods/prometheus-0"
    for collection in ("services", "secrets", "endpoints", "events", "configmaps", "serviceaccounts"):
        assert pattern(k8s, f"/api/v1/namespaces/default/{collection}") == f"/api/v1/namespaces/default/{collection}"
    github = "api.github.com"
    for sub in ("stargazers", "subscribers", "contributors", "collaborators", "assignees", "forks", "branches"):
        assert pattern(github, f"/repos/octocat/hello-world/{sub}") == f"/repos/octocat/hello-world/{sub}"
    for sub in ("followers", "following", "blocks"):
        assert pattern(github, f"/user/{sub}") == f"/user/{sub}"
    for action in ("finalize", "pay", "send", "void"):
        assert pattern("api.stripe.com", f"/v1/invoices/in_1MtHbELkdIwHu7ixl4OzzPMv/{action}", "POST") == \
            f"/v1/invoices/{{param1}}/{action}"
    for action in ("close", "open", "cancel"):
        assert pattern("shop.myshopify.com", f"/admin/api/2024-01/orders/450789469/{action}.json", "POST") == \
            f"/admin/api/2024-01/orders/{{param1}}/{action}.json"
    # Values that are not words are still learned: usernames, ids.
    assert pattern("vampi.example.com", "/users/v1/name1") == "/users/v1/{param1}"
