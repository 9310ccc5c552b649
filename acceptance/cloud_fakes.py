"""The Azure and Google fakes (`fakes/`) as pytest fixtures, and the configuration of a
`gpu_node_pool` on AKS or GKE against them.

Each fixture starts the fakes once per test module and gives the Terraform environment
that points the provider's real credential code at them: Azure's client-secret
credential (`AZURE_TENANT_ID`/`AZURE_CLIENT_ID`/`AZURE_CLIENT_SECRET`, with
`AZURE_AUTHORITY_HOST` the local Entra ID over HTTPS and `SSL_CERT_FILE` the test CA), and
Google's Application Default Credentials (`GOOGLE_APPLICATION_CREDENTIALS`, a service
account key file). Tests read results from the fakes' own state, not through the provider.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from fakes import tls_context
from fakes.azure.aks import ArmAks
from fakes.azure.tokens import AzureAD
from fakes.google.gke import Gke
from fakes.google.tokens import GoogleOAuth
from fakes.tokens import TokenRegistry

TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"
CLIENT = "9a1b2c3d-0000-4000-8000-00000000c0de"
CLIENT_SECRET = "aks-acceptance-secret-Qx7~not.real"
SUBSCRIPTION = "00000000-1111-4222-8333-444444444444"
PROJECT = "gpu-tf-acceptance"

# Variables of the other clouds' chains that must not leak in from the host.
_CLEARED = ("AZURE_FEDERATED_TOKEN_FILE", "IDENTITY_ENDPOINT", "MSI_ENDPOINT",
            "GOOGLE_OAUTH_ACCESS_TOKEN", "GOOGLE_CLOUD_PROJECT", "CLOUDSDK_CONFIG")


@dataclass
class AzureFakes:
    aad: AzureAD
    arm: ArmAks
    ca: Path
    client_secret: str = CLIENT_SECRET

    def env(self, base: dict[str, str]) -> dict[str, str]:
        env = {k: v for k, v in base.items() if k not in _CLEARED}
        env.update({"AZURE_TENANT_ID": TENANT, "AZURE_CLIENT_ID": CLIENT,
                    "AZURE_CLIENT_SECRET": self.client_secret, "AZURE_AUTHORITY_HOST": self.aad.url,
                    "SSL_CERT_FILE": str(self.ca)})
        return env

    def cluster(self, name: str, **options) -> str:
        """Seeds cluster `name` in resource group `rg-gpu`, eastus; returns its ARM id."""
        self.arm.seed_cluster(SUBSCRIPTION, "rg-gpu", name, "eastus", tenant_id=TENANT,
                              **options)
        return (f"/subscriptions/{SUBSCRIPTION}/resourceGroups/rg-gpu/providers/"
                f"Microsoft.ContainerService/managedClusters/{name}")

    def pools(self, cluster: str) -> dict[str, dict]:
        """The stored agent pools of `cluster` (by name), as ARM answers them."""
        for c in self.arm.state()["clusters"]:
            if c["name"] == cluster:
                return c["agentPools"]
        raise AssertionError(f"no cluster {cluster}")

    def requests(self, cluster: str) -> list[dict]:
        return [r for r in self.arm.state()["requests"]
                if f"/managedClusters/{cluster}" in r["path"]]

    def provider(self) -> str:
        return (f'  azure {{\n    endpoint        = "{self.arm.url}"\n'
                f'    subscription_id = "{SUBSCRIPTION}"\n    tenant_id = "{TENANT}"\n  }}\n')


@dataclass
class GcpFakes:
    oauth: GoogleOAuth
    gke: Gke
    key_file: Path

    def env(self, base: dict[str, str]) -> dict[str, str]:
        env = {k: v for k, v in base.items() if k not in _CLEARED}
        env["GOOGLE_APPLICATION_CREDENTIALS"] = str(self.key_file)
        return env

    def cluster(self, name: str, location: str = "us-central1", **options) -> str:
        self.gke.seed_cluster(PROJECT, location, name, **options)
        return f"projects/{PROJECT}/locations/{location}/clusters/{name}"

    def pools(self, cluster: str) -> dict[str, dict]:
        for c in self.gke.state()["clusters"]:
            if c["name"] == cluster:
                return {p["name"] if isinstance(p, dict) and "name" in p else n: p
                        for n, p in c["nodePools"].items()}
        raise AssertionError(f"no cluster {cluster}")

    def requests(self, cluster: str) -> list[dict]:
        return [r for r in self.gke.state()["requests"]
                if f"/clusters/{cluster}" in r["path"]]

    def provider(self) -> str:
        return (f'  gcp {{\n    endpoint = "{self.gke.url}"\n'
                f'    project  = "{PROJECT}"\n  }}\n')


def start_azure(directory: Path, client_secret: str = CLIENT_SECRET,
                time_scale=None) -> AzureFakes:
    """Entra ID and ARM with AKS over HTTPS; `time_scale` as the fakes take it (default
    `GPU_TF_TIME_SCALE`; 1 keeps real time)."""
    context, ca = tls_context(directory)
    tokens = TokenRegistry()
    aad = AzureAD(tokens, TENANT, CLIENT, client_secret, time_scale=time_scale).start(
        ssl_context=context)
    arm = ArmAks(tokens, time_scale=time_scale).start(ssl_context=context)
    return AzureFakes(aad, arm, ca, client_secret)


def start_gcp(directory: Path, time_scale=None) -> GcpFakes:
    """Google OAuth and GKE; `time_scale` as the fakes take it (default
    `GPU_TF_TIME_SCALE`; 1 keeps real time)."""
    directory.mkdir(parents=True, exist_ok=True)
    tokens = TokenRegistry()
    oauth = GoogleOAuth(tokens, time_scale=time_scale).start()
    account = oauth.create_service_account(PROJECT)
    key = oauth.write_key_file(account, directory / "key.json")
    gke = Gke(tokens, time_scale=time_scale).start()
    return GcpFakes(oauth, gke, key)


def pool_config(fakes, cloud: str, cluster: str, name: str, *, region: str, gpu: str,
                gpu_count: int, min_nodes: int = 1, max_nodes: int = 3, on_demand_min: int = 1,
                extra: str = "", labels: dict | None = None) -> str:
    """A provider block for `fakes` and one pool `gpu_node_pool.train`."""
    labels = labels if labels is not None else {"workload": "training"}
    label_lines = "".join(f'    {json.dumps(k)} = {json.dumps(v)}\n' for k, v in labels.items())
    return (
        'provider "gpu" {\n' + fakes.provider() +
        '  default_labels = {\n    team = "ml"\n  }\n}\n\n'
        'resource "gpu_node_pool" "train" {\n'
        f'  cloud     = "{cloud}"\n  region    = "{region}"\n'
        f'  cluster   = "{cluster}"\n  name      = "{name}"\n'
        f'  gpu       = "{gpu}"\n  gpu_count = {gpu_count}\n'
        f'  min_nodes = {min_nodes}\n  max_nodes = {max_nodes}\n'
        f'  capacity {{\n    spot          = true\n    on_demand_min = {on_demand_min}\n  }}\n'
        f'  labels = {{\n{label_lines}  }}\n'
        '  tags = {\n    project = "llm"\n  }\n'
        f'{extra}'
        '}\n'
    )
