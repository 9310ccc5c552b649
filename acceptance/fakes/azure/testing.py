"""What the ARM fakes' own tests share: a client of an ARM fake over HTTPS with a token from
the `AzureAD` fake (`ArmClient`). Not a test module itself."""

from __future__ import annotations

from dataclasses import dataclass

from ..testing import Reply, call

TENANT = "c2d4e6f8-1a3b-4c5d-8e7f-90a1b2c3d4e5"
CLIENT = "1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b"
SECRET = "fake-secret-Zr8~2q"
ARM_SCOPE = "https://management.azure.com/.default"


@dataclass
class ArmClient:
    """Requests to the fake ARM `arm` over HTTPS trusting `ca`, with a token the `AzureAD`
    fake `aad` issues app CLIENT of TENANT. Subclasses say which api-version a path gets
    by default (`default_api`)."""

    aad: object
    arm: object
    ca: object

    def default_api(self, path: str) -> str:
        raise NotImplementedError

    def token(self, scope=ARM_SCOPE, tenant=TENANT) -> str:
        reply = call("POST", f"{self.aad.url}/{tenant}/oauth2/v2.0/token", cafile=self.ca,
                     form={"client_id": CLIENT, "client_secret": SECRET,
                           "grant_type": "client_credentials", "scope": scope})
        assert reply.status == 200, reply.raw
        return reply.json["access_token"]

    @property
    def auth(self) -> dict:
        if not hasattr(self, "_auth"):
            self._auth = {"Authorization": "Bearer " + self.token()}
        return self._auth

    def __call__(self, method: str, path: str, body=None, api=None, query="", headers=None,
                 auth=True) -> Reply:
        """A request to the fake ARM; `api` defaults to the resource provider's pinned
        api-version (False: none)."""
        if api is None:
            api = self.default_api(path)
        params = ([f"api-version={api}"] if api else []) + ([query] if query else [])
        url = self.arm.url + path + ("?" + "&".join(params) if params else "")
        return call(method, url, body, {**(self.auth if auth else {}), **(headers or {})},
                    cafile=self.ca)

    def get_url(self, url: str) -> Reply:
        return call("GET", url, headers=self.auth, cafile=self.ca)

    def control(self, path: str, body=None, method="POST") -> Reply:
        return call(method, self.arm.url + path, body, cafile=self.ca)

    def state(self) -> dict:
        reply = self.control("/_fake/state", method="GET")
        assert reply.status == 200
        return reply.json

    def wait(self, reply: Reply) -> dict:
        """Polls the Azure-AsyncOperation of `reply` to its end; the final status body."""
        assert reply.status in (200, 201, 202), reply.raw
        for _ in range(10):
            got = self.get_url(reply.headers["Azure-AsyncOperation"])
            assert got.status == 200, got.raw
            if got.json["status"] != "InProgress":
                return got.json
        raise AssertionError("the operation never ended")
