"""Where the provider CLI (Claude Code) keeps its login, and how to read it.

The model layer uses the login (llm/credentials_proxy.py); redaction must know its tokens to keep
them out of every file. Both read it here, so neither depends on the other.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DEFAULT_CREDENTIALS_FILE = Path("~/.claude/.credentials.json")


def credentials_file(configured: str) -> Path:
    """The credentials file VENDORA_CREDENTIALS_FILE names, or the CLI's default one."""
    return Path(configured or DEFAULT_CREDENTIALS_FILE).expanduser()


def oauth_entry(path: Path) -> dict[str, Any]:
    """The `claudeAiOauth` object of the file; raises OSError or ValueError when there is none."""
    data = json.loads(path.read_text(encoding="utf-8"))
    entry = data.get("claudeAiOauth") if isinstance(data, dict) else None
    if not isinstance(entry, dict):
        raise ValueError("no claudeAiOauth object")
    return entry
