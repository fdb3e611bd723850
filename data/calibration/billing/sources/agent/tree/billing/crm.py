"""Client of the CRM's HTTP API (only the calls billing needs)."""

from __future__ import annotations

import json
import urllib.request


class CrmClient:
    def __init__(self, base_url: str, token: str) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token

    def notify_activation(self, sub_id: int) -> None:
        """Tell the CRM that subscription `sub_id` is now paying."""
        request = urllib.request.Request(
            f"{self.base_url}/activations",
            data=json.dumps({"subscriptionId": sub_id}).encode(),
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=5):
            pass
