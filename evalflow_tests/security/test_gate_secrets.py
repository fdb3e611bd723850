"""evalflow's own secrets never reach gates by name, and gate output hides their cheap disguises."""

from __future__ import annotations

import base64
from pathlib import Path
from urllib.parse import quote

import pytest
import yaml

from evalflow.errors import InputError
from evalflow.gates.sandbox import MASK, scrub, secret_values
from evalflow.io.inputs import load_gate_defaults, load_manifest

REFUSED = {
    "ANTHROPIC_API_KEY": None,
    "OPENAI_API_KEY": None,
    "AWS_SECRET_ACCESS_KEY": None,
    "AWS_PROFILE": "default",  # named at all: cloud credentials come from AWS_*
    "GOOGLE_APPLICATION_CREDENTIALS": "/tmp/x.json",
    "CLOUDSDK_AUTH_ACCESS_TOKEN_FILE": None,
    "AZURE_CLIENT_SECRET": None,
    "MY_DB_PASSWORD": None,  # passed through from evalflow's environment
    "GITHUB_TOKEN": None,
}


@pytest.mark.parametrize("name", sorted(REFUSED))
@pytest.mark.parametrize("where", ["manifest", "_benchmark.yaml"])
def test_gate_env_naming_a_secret_is_refused_in_one_line(
    tmp_path: Path, name: str, where: str
) -> None:
    gate_env = {name: REFUSED[name]}
    if where == "manifest":
        path = tmp_path / "run.yaml"
        manifest = {"benchmark": "b", "framework": "f", "run": "r", "repo": ".", "base": "a"}
        path.write_text(yaml.safe_dump({**manifest, "head": "b", "gate_env": gate_env}))
        with pytest.raises(InputError) as refused:
            load_manifest(path)
    else:
        (tmp_path / "_benchmark.yaml").write_text(yaml.safe_dump({"gate_env": gate_env}))
        with pytest.raises(InputError) as refused:
            load_gate_defaults(tmp_path)
    line = refused.value.one_line()
    assert "\n" not in line and name in line and "gate_env" in line
    assert refused.value.exit_code == 2


def test_test_values_and_harmless_pass_throughs_stay_allowed(tmp_path: Path) -> None:
    path = tmp_path / "_benchmark.yaml"
    allowed = {"DATABASE_PASSWORD": "test-only", "LANG": None, "NODE_OPTIONS": "--x"}
    path.write_text(yaml.safe_dump({"gate_env": allowed}))
    assert load_gate_defaults(tmp_path).gate_env == allowed


SECRET = "sk-ant-api03/Zq9+xW2=vLr8Tn"  # '/', '+', '=' make its percent-encoding differ


@pytest.mark.parametrize(
    "disguise",
    [
        SECRET[::-1],
        base64.b64encode(SECRET.encode()).decode(),
        base64.b64encode(f"ANTHROPIC_API_KEY={SECRET}\n".encode()).decode(),
        base64.b64encode(f"k:{SECRET}".encode()).decode(),
        base64.urlsafe_b64encode(f"xy{SECRET}".encode()).decode(),
        SECRET.encode().hex(),
        SECRET.encode().hex().upper(),
        quote(SECRET, safe=""),
    ],
    ids=[
        "reversed",
        "base64",
        "base64-in-env-dump",
        "base64-shift2",
        "urlsafe-shift1",
        "hex",
        "HEX",
        "url-encoded",
    ],
)
def test_gate_output_masks_cheap_encodings_of_a_secret(disguise: str) -> None:
    secrets = secret_values({"ANTHROPIC_API_KEY": SECRET, "LANG": "C.UTF-8"})
    shown = scrub(f"before {disguise} after", secrets)
    assert MASK in shown and disguise not in shown
    # Only the few characters that mix the secret with its neighbours may be left around the
    # mask (an env dump's "ANTHROPIC_API_KEY=" prefix is not the secret).
    first, *_, last = shown.removeprefix("before ").removesuffix(" after").split(MASK)
    assert len(last) <= 8
    assert len(first) <= 8 or base64.b64decode(first) == b"ANTHROPIC_API_KEY="
