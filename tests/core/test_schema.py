"""The OpenAPI document: valid OpenAPI 3, served without a key, with the API-key scheme."""
import pytest
import yaml
from openapi_spec_validator import validate

pytestmark = pytest.mark.django_db


@pytest.fixture
def schema(anon_client) -> dict:
    response = anon_client.get("/api/v1/schema", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    return response.json() if response["Content-Type"].startswith("application/vnd.oai.openapi+json") else yaml.safe_load(response.content)


def test_schema_is_valid_openapi_3(schema):
    assert schema["openapi"].startswith("3.")
    validate(schema)


def test_schema_declares_the_authorization_api_key_scheme(schema):
    scheme = schema["components"]["securitySchemes"]["ApiKeyAuth"]
    assert (scheme["type"], scheme["in"], scheme["name"]) == ("apiKey", "header", "Authorization")
    assert schema["paths"]["/api/v1/verify"]["get"]["security"] == [{"ApiKeyAuth": []}]


def test_docs_page_is_served_without_a_key(anon_client):
    response = anon_client.get("/api/v1/docs")
    assert response.status_code == 200
    assert b"swagger" in response.content.lower()
