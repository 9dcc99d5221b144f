"""The REST API's test client, as a mobile app holds it."""

from rest_framework.test import APIClient


def api(token: str | None = None) -> APIClient:
    """An API client, sending `Authorization: Token <token>` when given one."""
    client = APIClient()
    if token:
        client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client
