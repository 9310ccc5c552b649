"""Fixtures the fakes' own tests share: a token registry, the Google OAuth fake and a
service account of project `fake-project` it trusts."""

from __future__ import annotations

import pytest

from fakes.google.tokens import GoogleOAuth
from fakes.tokens import TokenRegistry

PROJECT = "fake-project"


@pytest.fixture
def registry():
    return TokenRegistry()


@pytest.fixture
def oauth(registry):
    with GoogleOAuth(registry) as server:
        yield server


@pytest.fixture
def account(oauth):
    return oauth.create_service_account(PROJECT)
