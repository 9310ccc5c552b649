"""The provider binary run by a person, and its refusal to serve without Terraform: no
handshake without the magic cookie (with a message mentioning Terraform); `--version` and
`--help` work.
"""

import re
import subprocess

import pytest

from conftest import REPO
from plugin import MAGIC_COOKIE, make_client_cert, plugin_env


def run(binary, *args, env=None, timeout=10):
    try:
        return subprocess.run([str(binary), *args], env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"`{binary.name} {' '.join(args)}` did not exit within {timeout}s "
                    f"(serving as a plugin?); stdout: {e.stdout!r}", pytrace=False)


def workspace_version():
    text = (REPO / "Cargo.toml").read_text()
    m = re.search(r'^\[workspace\.package\][^\[]*?^version\s*=\s*"([^"]+)"', text, re.M | re.S)
    return m.group(1) if m else None


def env_without_cookie(**extra):
    env = plugin_env(None)
    del env["TF_PLUGIN_MAGIC_COOKIE"]
    env.update(extra)
    return env


@pytest.mark.parametrize("cookie", [None, "not-the-cookie", MAGIC_COOKIE[:-1]])
def test_refuses_to_serve_without_the_cookie(provider_bin, tmp_path, cookie):
    env = env_without_cookie()
    env["PLUGIN_CLIENT_CERT"] = make_client_cert(tmp_path).cert_pem.decode()
    if cookie is not None:
        env["TF_PLUGIN_MAGIC_COOKIE"] = cookie
    res = run(provider_bin, env=env)
    assert res.returncode != 0, res
    assert not res.stdout.startswith("1|"), f"served a handshake without the cookie: {res.stdout}"
    assert "Terraform" in res.stdout + res.stderr, res


def test_version(provider_bin):
    res = run(provider_bin, "--version", env=env_without_cookie())
    assert res.returncode == 0, res
    assert re.search(r"\b\d+\.\d+\.\d+", res.stdout), res
    version = workspace_version()
    if version:
        assert version in res.stdout, res


def test_help(provider_bin):
    res = run(provider_bin, "--help", env=env_without_cookie())
    assert res.returncode == 0, res
    assert "usage" in res.stdout.lower(), res
    assert "panicked" not in res.stderr
