"""Service settings (architecture §3): limits and the public base URL."""

from __future__ import annotations

import os

CODE_LENGTH = 7
MAX_LINKS_PER_MINUTE = 10
RATE_WINDOW_SECONDS = 60
MAX_EXPIRY_DAYS = 365
PUBLIC_BASE_URL = os.environ.get("SHORTLINK_BASE_URL", "https://s.example.com/")
