"""Tests of the benchmark scripts' logic."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from support import REPO


def load_bench(name: str) -> ModuleType:
    """bench/<name>.py: a script, not a package module, loaded from its file, with bench/ on the
    path as when it runs (its `_common`)."""
    if str(REPO / "bench") not in sys.path:
        sys.path.insert(0, str(REPO / "bench"))
    spec = importlib.util.spec_from_file_location(f"bench_{name}", REPO / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
