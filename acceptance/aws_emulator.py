"""A local AWS for the acceptance suite: moto in server mode (EKS, EC2, IAM, STS) on
127.0.0.1, and boto3 helpers that build what a `gpu_node_pool` needs (VPC, subnets, node
role, EKS cluster).

Nothing here may reach real AWS: every boto3 client gets the server's URL, static test
credentials and no retries, and `terraform_env` gives Terraform (and so the provider) the
same credentials, no instance metadata, no shared config files and a dead fallback
endpoint, so a service whose endpoint the provider forgot to override fails at once
(connection refused) instead of calling AWS.

See acceptance/README.md ("AWS emulator (moto)") for what moto does not emulate.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REGION = "us-east-1"
ACCOUNT = "123456789012"  # moto's default account id
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
               "AWS_SESSION_TOKEN": "testing"}
# Where a forgotten endpoint goes: nothing listens on port 9, so the call is refused.
DEAD_ENDPOINT = "http://127.0.0.1:9"
# moto's behaviour switches the suite relies on (see the README).
MOTO_FLAGS = {
    "MOTO_EC2_ENABLE_INSTANCE_TYPE_VALIDATION": "true",
    "MOTO_ENABLE_AMI_VALIDATION": "true",
    "MOTO_IAM_LOAD_MANAGED_POLICIES": "true",
}
# Every AWS variable that could point a client somewhere else, or at other credentials.
_AWS_VARS = (
    "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_ROLE_SESSION_NAME", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_AUTHORIZATION_TOKEN",
    "AWS_CA_BUNDLE", "AWS_USE_FIPS_ENDPOINT", "AWS_USE_DUALSTACK_ENDPOINT",
    "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
)


def moto_server_bin() -> Path:
    """`moto_server` of the venv: $MOTO_SERVER, $VENV/bin, this interpreter's bin, .venv/bin."""
    if os.environ.get("MOTO_SERVER"):
        return Path(os.environ["MOTO_SERVER"])
    repo = Path(__file__).resolve().parent.parent
    candidates = []
    if os.environ.get("VENV"):
        venv = Path(os.environ["VENV"])
        candidates.append((venv if venv.is_absolute() else repo / venv) / "bin" / "moto_server")
    candidates += [Path(sys.executable).parent / "moto_server", repo / ".venv" / "bin" / "moto_server"]
    for c in candidates:
        if c.exists():
            return c
    raise FileNotFoundError(
        "moto_server not found ($MOTO_SERVER, $VENV/bin, .venv/bin): run acceptance/setup.sh")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


@dataclass
class MotoServer:
    """A running `moto_server`; `stop()` ends it (and only it)."""

    proc: subprocess.Popen
    port: int
    log_path: Path
    _clients: dict = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client(self, service: str, region: str = REGION):
        """A boto3 client of `service` talking to this server only (cached)."""
        key = (service, region)
        if key not in self._clients:
            import boto3
            from botocore.config import Config

            session = boto3.session.Session(
                aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
                aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
                aws_session_token=CREDENTIALS["AWS_SESSION_TOKEN"],
                region_name=region,
            )
            self._clients[key] = session.client(
                service, endpoint_url=self.url,
                config=Config(retries={"max_attempts": 1, "mode": "standard"},
                              connect_timeout=5, read_timeout=30))
        return self._clients[key]

    def endpoints(self) -> dict[str, str]:
        """The provider's `aws.endpoints` map: every overridable service at this server."""
        return {s: self.url for s in ("ec2", "eks", "pricing")}

    def terraform_env(self, base: dict[str, str], tmp: Path | None = None) -> dict[str, str]:
        """`base` (Terraform's environment) plus static credentials and no way out to AWS:
        no IMDS, empty shared config/credentials files, no profile, and a dead
        AWS_ENDPOINT_URL for any service the provider block does not override. Live price
        sources point at the dead endpoint too."""
        tmp = Path(tmp or tempfile.mkdtemp(prefix="aws-"))
        tmp.mkdir(parents=True, exist_ok=True)
        for name in ("config", "credentials"):
            (tmp / name).write_text("")
        env = {k: v for k, v in base.items() if not (k in _AWS_VARS or k.startswith("AWS_ENDPOINT_URL"))}
        env.update(CREDENTIALS)
        env.update(
            AWS_REGION=REGION, AWS_DEFAULT_REGION=REGION,
            AWS_EC2_METADATA_DISABLED="true",
            AWS_CONFIG_FILE=str(tmp / "config"),
            AWS_SHARED_CREDENTIALS_FILE=str(tmp / "credentials"),
            AWS_ENDPOINT_URL=DEAD_ENDPOINT,
            AWS_MAX_ATTEMPTS="1",
            GPU_PRICES_AWS_ENDPOINT=DEAD_ENDPOINT, GPU_PRICES_AWS_EC2_ENDPOINT=DEAD_ENDPOINT,
            GPU_PRICES_AZURE_ENDPOINT=DEAD_ENDPOINT, GPU_PRICES_GCP_ENDPOINT=DEAD_ENDPOINT,
            GPU_PRICES_CACHE_DIR=str(tmp / "price-cache"),
        )
        return env

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_moto(log_dir: Path | None = None, timeout: float = 30) -> MotoServer:
    """Starts `moto_server -H 127.0.0.1 -p <free port>` and waits until it answers."""
    port = _free_port()
    log_dir = Path(log_dir or tempfile.mkdtemp(prefix="moto-"))
    log_path = log_dir / f"moto-{port}.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(MOTO_FLAGS)
    env.update(CREDENTIALS, AWS_DEFAULT_REGION=REGION, AWS_EC2_METADATA_DISABLED="true")
    log = open(log_path, "wb")
    try:
        proc = subprocess.Popen(
            [str(moto_server_bin()), "-H", "127.0.0.1", "-p", str(port)],
            env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    finally:
        log.close()
    server = MotoServer(proc, port, log_path)
    deadline = time.monotonic() + timeout
    while not _listening(port):
        if proc.poll() is not None:
            raise RuntimeError(f"moto_server exited early ({proc.returncode}):\n{server.log()}")
        if time.monotonic() > deadline:
            server.stop()
            raise RuntimeError(f"moto_server did not listen on {port} within {timeout} s:\n"
                               f"{server.log()}")
        time.sleep(0.05)
    # Listening is not serving yet: wait for a real answer.
    while True:
        try:
            server.client("sts").get_caller_identity()
            return server
        except Exception:  # noqa: BLE001 - any failure here means "not ready yet"
            if time.monotonic() > deadline:
                server.stop()
                raise
            time.sleep(0.1)


# --- EKS prerequisites --------------------------------------------------------------

_EC2_TRUST = {
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"},
                   "Action": "sts:AssumeRole"}],
}
_EKS_TRUST = {
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "eks.amazonaws.com"},
                   "Action": "sts:AssumeRole"}],
}
NODE_POLICIES = (
    "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
    "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
    "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly",
)


@dataclass
class EksCluster:
    """What `create_eks_prerequisites` made."""

    name: str
    arn: str
    region: str
    vpc_id: str
    subnet_ids: list[str]
    node_role_arn: str
    cluster_role_arn: str

    def tfvars(self, endpoint: str) -> dict:
        """Variables of examples/resources/gpu_node_pool for this cluster."""
        return {"cluster_name": self.name, "node_role_arn": self.node_role_arn,
                "subnet_ids": self.subnet_ids, "aws_endpoint": endpoint}


def create_eks_prerequisites(moto: MotoServer, cluster: str, region: str = REGION,
                             cidr_octet: int | None = None) -> EksCluster:
    """A VPC with two subnets in two zones, an EKS cluster role and a node role (the three
    managed node policies attached), and an ACTIVE cluster `cluster` on those subnets.
    Names derive from `cluster`, so several clusters can share one server."""
    ec2 = moto.client("ec2", region)
    iam = moto.client("iam", region)
    eks = moto.client("eks", region)
    octet = cidr_octet if cidr_octet is not None else (sum(cluster.encode()) % 200) + 10
    vpc_id = ec2.create_vpc(CidrBlock=f"10.{octet}.0.0/16")["Vpc"]["VpcId"]
    zones = [z["ZoneName"] for z in ec2.describe_availability_zones()["AvailabilityZones"]][:2]
    subnet_ids = [
        ec2.create_subnet(VpcId=vpc_id, CidrBlock=f"10.{octet}.{i}.0/24",
                          AvailabilityZone=az)["Subnet"]["SubnetId"]
        for i, az in enumerate(zones)
    ]
    cluster_role = iam.create_role(
        RoleName=f"{cluster}-cluster", AssumeRolePolicyDocument=json.dumps(_EKS_TRUST),
    )["Role"]["Arn"]
    iam.attach_role_policy(RoleName=f"{cluster}-cluster",
                           PolicyArn="arn:aws:iam::aws:policy/AmazonEKSClusterPolicy")
    node_role = iam.create_role(
        RoleName=f"{cluster}-nodes", AssumeRolePolicyDocument=json.dumps(_EC2_TRUST),
    )["Role"]["Arn"]
    for policy in NODE_POLICIES:
        iam.attach_role_policy(RoleName=f"{cluster}-nodes", PolicyArn=policy)
    created = eks.create_cluster(
        name=cluster, roleArn=cluster_role,
        resourcesVpcConfig={"subnetIds": subnet_ids},
    )["cluster"]
    status = eks.describe_cluster(name=cluster)["cluster"]["status"]
    assert status == "ACTIVE", f"cluster {cluster} is {status}"
    return EksCluster(name=cluster, arn=created["arn"], region=region, vpc_id=vpc_id,
                      subnet_ids=subnet_ids, node_role_arn=node_role,
                      cluster_role_arn=cluster_role)


def node_groups(moto: MotoServer, cluster: str, region: str = REGION) -> dict[str, dict]:
    """Every node group of `cluster`, by name, as DescribeNodegroup returns it."""
    eks = moto.client("eks", region)
    names = eks.list_nodegroups(clusterName=cluster)["nodegroups"]
    return {n: eks.describe_nodegroup(clusterName=cluster, nodegroupName=n)["nodegroup"]
            for n in names}


if __name__ == "__main__":
    # A quick look: start moto, make one cluster, print it, stop.
    server = start_moto()
    try:
        c = create_eks_prerequisites(server, "demo")
        print(server.url)
        print(json.dumps(c.__dict__, indent=2))
        print(json.dumps(node_groups(server, "demo")))
    finally:
        server.stop()
