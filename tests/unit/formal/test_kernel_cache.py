"""Files Coq's kernel accepted are answered from this machine's cache, and only those; a cache
another user could write is not used (lemmata/formal/kernel_cache.py)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pytest

from lemmata.formal import coq, kernel_cache
from lemmata.formal.coq import check_script, coq_source
from lemmata.kernel import coq_file
from lemmata.machine_cache import cache_directory

COMMUTES = "forall a b : Z, a + b = b + a"
ODD_SUM_ODD = "forall a b : Z, a mod 2 = 1 -> b mod 2 = 1 -> (a + b) mod 2 = 1"  # false: 1 + 1 = 2


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache of this test's own, not the session's (where other tests' files are kept)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return cache_directory(kernel_cache.CACHE_NAME)


@pytest.fixture
def coqc_runs(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The files coqc really ran on (in its box)."""
    runs: list[bytes] = []
    real_run = coq._run_in_box

    def counted(argv: Sequence[str], stdin: bytes, timeout: float) -> coq_file.CoqRun:
        runs.append(stdin)
        return real_run(argv, stdin, timeout)

    monkeypatch.setattr(coq, "_run_in_box", counted)
    return runs


def plant_acceptance(proposition: str, body: str) -> None:
    """An entry saying coqc accepted `body` as a proof of `proposition` with no axioms, as whoever
    can write the cache folder could leave it."""
    nonce = "0123456789abcdef"
    forged = f"No object of basename lemmata_marker_{nonce}\nClosed under the global context\n"
    kernel_cache.remember(coq_source(proposition, "Z", body, nonce=nonce), nonce, coq.coq_installation(), forged)


@pytest.mark.usefixtures("needs_coq")
def test_an_acceptance_planted_in_a_cache_others_can_write_proves_nothing(own_cache: Path) -> None:
    """The attack: a false statement's 'acceptance' planted in the cache. In a folder only this user
    can write it would be taken (the user's own files are theirs to keep); in one others can
    write (an XDG_CACHE_HOME in a shared folder) it is not read, and coqc refutes the proof."""
    body = "intros; lia."
    plant_acceptance(ODD_SUM_ODD, body)
    assert check_script(ODD_SUM_ODD, "Z", body).outcome == "proved"  # the planted answer is read as is
    own_cache.chmod(0o777)
    verdict = check_script(ODD_SUM_ODD, "Z", body)
    assert verdict.outcome == "failed" and not verdict.proved


@pytest.mark.usefixtures("needs_coq")
def test_a_file_the_kernel_accepted_is_answered_from_the_cache_with_a_new_nonce(coqc_runs: list[bytes]) -> None:
    first = check_script(COMMUTES, "Z", "intros; lia.")
    second = check_script(COMMUTES, "Z", "intros; lia.")
    assert first.outcome == second.outcome == "proved"
    assert len(coqc_runs) == 1  # the second file differs only by its nonce
    assert first.source != second.source and second.axioms == first.axioms
    again = coq._run_in_box(  # the file the second verdict names checks on its own: its nonce is consistent
        ["/bin/sh", "-c", "cat > again.v && exec coqc -q again.v"], second.source.encode(), 20
    )
    assert again.returncode == 0


@pytest.mark.usefixtures("needs_coq")
def test_a_rejected_file_is_not_kept_and_coqc_runs_each_time(coqc_runs: list[bytes], own_cache: Path) -> None:
    for _ in range(2):
        assert check_script(ODD_SUM_ODD, "Z", "intros; lia.").outcome == "failed"
    assert len(coqc_runs) == 2
    assert list(own_cache.iterdir()) == []


def test_an_output_holding_the_placeholder_is_not_kept(own_cache: Path) -> None:
    """Kept, the placeholder would be filled with the next check's nonce: a proof printing it
    would forge the marker."""
    kernel_cache.remember("file", "", "coqc", f"No object of basename lemmata_marker_{kernel_cache.PLACEHOLDER}")
    assert not own_cache.exists() or list(own_cache.iterdir()) == []


@pytest.mark.usefixtures("needs_coq")
def test_the_development_checked_twice_runs_coqc_once(coqc_runs: list[bytes]) -> None:
    source = coq_source(COMMUTES, "Z", "intros; lia.")
    assert coq.check_file(source) == (None, "")
    assert coq.check_file(source) == (None, "")
    assert len(coqc_runs) == 1
    assert coq.check_file(source.replace("lia.", "reflexivity.")) != (None, "")
    assert len(coqc_runs) == 2


def test_another_coq_installation_does_not_read_the_answers_of_this_one() -> None:
    kernel_cache.remember("Theorem t : True. Proof. exact I. Qed.", "", "coqc 8.16", "accepted")
    assert kernel_cache.recall("Theorem t : True. Proof. exact I. Qed.", "", "coqc 8.16") == "accepted"
    assert kernel_cache.recall("Theorem t : True. Proof. exact I. Qed.", "", "coqc 8.17") is None


def test_a_damaged_entry_is_a_miss(own_cache: Path) -> None:
    kernel_cache.remember("file", "", "coqc", "accepted")
    (entry,) = own_cache.iterdir()
    entry.write_text("{not json")
    assert kernel_cache.recall("file", "", "coqc") is None


def test_beyond_its_capacity_the_least_recently_used_go(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kernel_cache, "CAPACITY_ENTRIES", 2)
    for age, name in enumerate(("a", "b")):
        kernel_cache.remember(name, "", "coqc", "accepted")
        entry = kernel_cache._entry(name, "", "coqc")
        assert entry is not None
        os.utime(entry, (1_000_000 + age, 1_000_000 + age))  # a older than b
    assert kernel_cache.recall("a", "", "coqc") == "accepted"  # and now the most recently used
    kernel_cache.remember("c", "", "coqc", "accepted")
    assert kernel_cache.recall("b", "", "coqc") is None
    assert kernel_cache.recall("a", "", "coqc") == kernel_cache.recall("c", "", "coqc") == "accepted"
