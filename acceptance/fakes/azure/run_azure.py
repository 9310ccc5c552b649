"""Runs the Entra ID token fake and the ARM/AKS fake until stdin closes: for tests outside
pytest (the Rust integration tests of `gpu_core::cloud::azure`).

    python acceptance/fakes/azure/run_azure.py TENANT CLIENT_ID CLIENT_SECRET DIR

Both serve HTTPS (azure_identity refuses a plain-HTTP authority host) with a certificate
from a test CA written to DIR. Prints one JSON line, `{"aad": <authority host URL>,
"arm": <ARM base URL>, "ca": <CA certificate path>}`, then serves
until its stdin reaches end of file (the parent exiting closes it). Clusters, faults and
settings go through each fake's `/_fake/` control surface.
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from fakes import tls_context  # noqa: E402
from fakes.azure.aks import ArmAks  # noqa: E402
from fakes.azure.tokens import AzureAD  # noqa: E402
from fakes.tokens import TokenRegistry  # noqa: E402


def main() -> int:
    tenant, client_id, secret, directory = sys.argv[1:5]
    context, ca = tls_context(Path(directory))
    tokens = TokenRegistry()
    aad = AzureAD(tokens, tenant, client_id, secret).start(ssl_context=context)
    arm = ArmAks(tokens).start(ssl_context=context)
    print(json.dumps({"aad": aad.url, "arm": arm.url, "ca": str(ca)}), flush=True)
    try:
        sys.stdin.read()
    finally:
        arm.stop()
        aad.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
