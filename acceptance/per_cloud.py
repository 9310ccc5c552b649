"""One test run once per cloud: what the lifecycles parametrised by cloud
(`tests/*/test_*_aks_gke.py`, `tests/*/test_*_azure_gcp.py`) share. Each module describes
its clouds as small classes with an `id` (the test id) and `fixtures` (the names of the
fixtures their constructor takes, in order), then `each_cloud, cloud = per_cloud(A, B)`.
"""

from __future__ import annotations

import pytest


def per_cloud(*kinds):
    """(`each_cloud`, `cloud`): a mark that runs a test once per kind, and the `cloud`
    fixture that makes the kind's description from the fixtures it names. The fixture
    takes `terraform`, so a test that uses it runs under every Terraform version too."""
    by_id = {k.id: k for k in kinds}
    each_cloud = pytest.mark.parametrize("cloud", list(by_id), indirect=True)

    @pytest.fixture
    def cloud(request, terraform):
        """The description of `request.param`'s cloud, bound to its fixtures."""
        kind = by_id[request.param]
        return kind(*(request.getfixturevalue(name) for name in kind.fixtures))

    return each_cloud, cloud
