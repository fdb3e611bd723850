from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.api_client import ApiClient


@pytest.fixture
def api(tmp_path: Path) -> Iterator[ApiClient]:
    client = ApiClient(tmp_path / "trialist-e2e.db")
    yield client
    client.conn.close()
