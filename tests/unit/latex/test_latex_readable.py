"""Mathematics as plain Unicode for places that cannot typeset it (the lemma graph's labels)."""

from __future__ import annotations

import pytest

from lemmata.latex.readable import readable_math


@pytest.mark.parametrize(
    "text, readable",
    [
        pytest.param(
            "If $a$ and $b$ are even, there are integers $m, n$ with $a = 2m$ and $b = 2n$.",
            "If a and b are even, there are integers m, n with a = 2m and b = 2n.",
            id="the-even-sum-plan",
        ),
        pytest.param(
            r"$\forall a, b \in \mathbb{Z}: 2 \mid a \wedge 2 \mid b \Rightarrow 2 \mid (a+b)$",
            "∀ a, b ∈ ℤ: 2 ∣ a ∧ 2 ∣ b ⇒ 2 ∣ (a+b)",
            id="symbols-and-blackboard",
        ),
        pytest.param(
            r"For $x > 0$, $\frac{x^2 + 1}{x} \geq 2$ and \(\sqrt{x_1 x_2} \le \frac{x_1+x_2}{2}\).",
            "For x > 0, (x² + 1)/x ≥ 2 and √(x₁ x₂) ≤ (x₁+x₂)/2.",
            id="fractions-roots-scripts",
        ),
        pytest.param(r"$\sum_{i=1}^{n} i = \frac{n(n+1)}{2}$", "∑_(i=1)ⁿ i = (n(n+1))/2", id="scripts-kept-legible"),
        pytest.param(r"Then $$x^{2} \geq 0$$ holds.", "Then x² ≥ 0 holds.", id="display"),
        pytest.param("It costs $5 and $6.", "It costs $5 and $6.", id="money-is-not-math"),
        pytest.param(
            r"Text with \emph{words} outside math", r"Text with \emph{words} outside math", id="prose-untouched"
        ),
        pytest.param(r"$\mathcal{F}_t \subseteq \mathcal{G}$", "F_t ⊆ G", id="fonts-dropped"),
    ],
)
def test_formulas_read_as_plain_unicode(text, readable):
    assert readable_math(text) == readable
