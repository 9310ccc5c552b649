"""One base URL for the Google API fakes, as the provider's `gcp.endpoint` is one base URL
for every Google API it calls: Compute Engine paths (`/compute/v1/...`, as on
compute.googleapis.com) go to the Compute fake, every other path (`/v1/...`, as on
container.googleapis.com) to the GKE fake. Each fake keeps its own state, request log and
faults; the front holds none of its own.
"""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

from fakes import FakeServer, Response


class GoogleFront(FakeServer):
    """Routes by path prefix to `compute` (`/compute/`) or `gke` (the rest)."""

    name = "google-front"

    def __init__(self, gke: FakeServer, compute: FakeServer, time_scale=None):
        super().__init__(time_scale)
        self.gke, self.compute = gke, compute

    def backend(self, raw_path: str) -> FakeServer:
        """The fake that serves `raw_path`."""
        path = unquote(urlsplit(raw_path).path)
        # The pools' instance groups are GKE's: only the GKE fake knows them.
        if path.startswith("/compute/") and "/instanceGroupManagers/" not in path:
            return self.compute
        return self.gke

    def dispatch(self, method: str, raw_path: str, headers, body: bytes) -> Response:
        return self.backend(raw_path).dispatch(method, raw_path, headers, body)

    def snapshot(self) -> dict:
        return {"gke": self.gke.snapshot(), "compute": self.compute.snapshot()}
