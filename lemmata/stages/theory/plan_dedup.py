"""Lemma plans without duplicates: copies of a lemma merged, restatements of the goal dropped.

Statements are compared in a canonical form (`normalise_statement`): LaTeX delimiters and
spacing, case, punctuation and phrasing noise removed, a few fixed phrasings rewritten, and
single-letter variables renamed #1, #2, ... in order of first appearance. Two statements are
the same only when their canonical forms are equal. There is no similarity threshold: one
token is all that separates `a+b` from `a \\cdot b`, `\\le` from `<` or even from odd, so any
ratio that merges real rephrasings also merges those. Every tolerance is a rule listed here;
a copy these rules miss costs one redundant proof, a wrong merge would cost a needed lemma.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from lemmata.artifacts import Lemma

UNICODE_SYMBOLS = {
    "≤": r" \le ",
    "≥": r" \ge ",
    "≠": r" \ne ",
    "·": r" \cdot ",
    "×": r" \times ",
    "∈": r" \in ",
    "∣": r" \mid ",
    "∧": r" \wedge ",
    "∨": r" \vee ",
    "→": r" \to ",
    "⇒": r" \Rightarrow ",
    "⟹": r" \Rightarrow ",
    "⇔": r" \iff ",
    "∀": r" \forall ",
    "∃": r" \exists ",
    "−": "-",
    "ℕ": r" \mathbb{N} ",
    "ℤ": r" \mathbb{Z} ",
    "ℚ": r" \mathbb{Q} ",
    "ℝ": r" \mathbb{R} ",
    "ℂ": r" \mathbb{C} ",
}
TEXT_WRAPPER = re.compile(r"\\(?:text|textrm|textit|textbf|mbox|mathrm|emph)\s*\{([^{}]*)\}")
OPERATOR_NAME = re.compile(r"\\operatorname\*?\s*\{\s*([A-Za-z]+)\s*\}")
NAMED_SET = re.compile(r"\\(math(?:bb|cal|frak|scr|bf))\s*(?:\{\s*([A-Za-z])\s*\}|([A-Za-z])(?![A-Za-z]))")
# Math delimiters, spacing commands and line breaks: layout, not content.
LAYOUT = re.compile(r"\$|\\[()\[\]]|\\[,;:! ]|\\\\|~")
TOKEN = re.compile(r"\\math(?:bb|cal|frak|scr|bf)\{[A-Za-z]\}|\\[A-Za-z]+|\\[{}|%&#]|[A-Za-z]+|\d+(?:\.\d+)?|\S")

COMMAND_SYNONYMS = {
    r"\leq": r"\le",
    r"\leqslant": r"\le",
    r"\geq": r"\ge",
    r"\geqslant": r"\ge",
    r"\neq": r"\ne",
    r"\lt": "<",
    r"\gt": ">",
    r"\land": r"\wedge",
    r"\lor": r"\vee",
    r"\implies": r"\Rightarrow",
    r"\Longrightarrow": r"\Rightarrow",
    r"\Leftrightarrow": r"\iff",
    r"\Longleftrightarrow": r"\iff",
    r"\ldots": r"\dots",
    r"\cdots": r"\dots",
    r"\dfrac": r"\frac",
    r"\tfrac": r"\frac",
    r"\vert": "|",
    r"\lvert": "|",
    r"\rvert": "|",
    r"\varepsilon": r"\epsilon",
    r"\varphi": r"\phi",
    # Quantifier symbols read as the words they abbreviate, so the word rules apply to both.
    r"\forall": "for",
    r"\exists": "exists",
}
SIZING_COMMANDS = {
    r"\left",
    r"\right",
    r"\big",
    r"\Big",
    r"\bigl",
    r"\bigr",
    r"\Bigl",
    r"\Bigr",
    r"\displaystyle",
    r"\quad",
    r"\qquad",
}
# Greek letters are variables like Latin ones; \pi is a constant.
GREEK_VARIABLES = {
    "\\" + name
    for name in (
        "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi rho sigma tau "
        "upsilon phi chi psi omega Gamma Delta Theta Lambda Xi Sigma Upsilon Phi Psi Omega"
    ).split()
}

# After "a"/"A", these words show it is a variable ("a and b", "a divides b"), not an article.
WORDS_AFTER_A_VARIABLE = {
    "and",
    "or",
    "is",
    "are",
    "be",
    "in",
    "divides",
    "divide",
    "has",
    "equals",
    "plus",
    "minus",
    "times",
    "mod",
    "if",
    "iff",
    "then",
    "with",
    "satisfies",
    "does",
    "must",
    "can",
}
PHRASES: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("if", "and", "only", "if"), ("iff",)),
    (("prove", "that"), ()),
    (("show", "that"), ()),
    (("we", "have"), ()),
    (("it", "hold", "that"), ()),
    (("for", "all"), ("for",)),
    (("for", "every"), ("for",)),
    (("for", "each"), ("for",)),
    (("for", "any"), ("for",)),
    (("for", "arbitrary"), ("for",)),
    (("there", "exist"), ("exists",)),
    (("there", "is"), ("exists",)),
    (("there", "are"), ("exists",)),
    (("exist",), ("exists",)),
    # Evenness and oddness are properties of integers: "even integers" says no more than "even".
    (("even", "integer"), ("even",)),
    (("even", "number"), ("even",)),
    (("odd", "integer"), ("odd",)),
    (("odd", "number"), ("odd",)),
)
# A noun naming the formula that follows it adds nothing: "the sum $x+y$" is "$x+y$". Only
# after an article: in "for every integer $n$" the noun is the type of $n$.
ARTICLES = {"the", "a", "A", "an"}
APPOSITION_NOUNS = {"sum", "product", "difference", "quotient", "expression", "quantity", "value", "number", "integer"}
FILLER_WORDS = {
    "let",
    "then",
    "if",
    "suppose",
    "assume",
    "given",
    "we",
    "the",
    "an",
    "is",
    "are",
    "be",
    "both",
    "hold",
    "also",
    "so",
    "hence",
    "thus",
    "therefore",
    "lemma",
    "claim",
    "that",
    "for",
    "all",
    "every",
    "each",
    "any",
    "arbitrary",
    "prove",
    "show",
}
PUNCTUATION = {",", ".", ";", ":", "!", "?", '"', "`"}


def normalise_statement(statement: str, rename_variables: bool = True) -> str:
    """The canonical form of a statement, for comparison only."""
    tokens = _without_articles(_without_appositions(_tokens(_plain_latex(statement))))
    tokens = _declarations_first(_phrases_rewritten([_singular(token) for token in tokens]))
    tokens = _without_fillers(tokens)
    return " ".join(_variables_renamed(tokens) if rename_variables else tokens)


def _plain_latex(text: str) -> str:
    """The statement with unicode math spelled in LaTeX and layout-only markup removed."""
    for symbol, latex in UNICODE_SYMBOLS.items():
        text = text.replace(symbol, latex)
    text = TEXT_WRAPPER.sub(r" \1 ", text)
    text = OPERATOR_NAME.sub(r" \\\1 ", text)
    text = NAMED_SET.sub(lambda match: rf" \{match.group(1)}{{{match.group(2) or match.group(3)}}} ", text)
    return LAYOUT.sub(" ", text)


def _tokens(text: str) -> list[str]:
    """Words (lower case), single letters (case kept), numbers, commands and symbols."""
    tokens = []
    for token in TOKEN.findall(text):
        token = COMMAND_SYNONYMS.get(token, token)
        if token in SIZING_COMMANDS:
            continue
        tokens.append(token.lower() if token.isalpha() and len(token) > 1 else token)
    return _single_tokens_unbraced(tokens)


def _single_tokens_unbraced(tokens: list[str]) -> list[str]:
    """`{2}` as `2`: `x^{2}` and `x^2` are one formula; braces around more stay (`{a+b}^2`)."""
    result: list[str] = []
    for token in tokens:
        if token == "}" and len(result) >= 2 and result[-2] == "{":
            result[-2:] = [result[-1]]
        else:
            result.append(token)
    return result


def _without_articles(tokens: list[str]) -> list[str]:
    """Drop "a"/"A" where it is an article ("a prime $p$"), keep it where it is a variable."""
    kept = []
    for position, token in enumerate(tokens):
        following = tokens[position + 1] if position + 1 < len(tokens) else ""
        if token in ("a", "A") and _is_word(following) and following not in WORDS_AFTER_A_VARIABLE:
            continue
        kept.append(token)
    return kept


def _singular(token: str) -> str:
    """Plurals and third persons as the stem: "integers" as "integer", "implies" as "imply"."""
    if not _is_word(token) or len(token) < 4 or not token.endswith("s") or token.endswith(("ss", "us", "is")):
        return token
    return token[:-3] + "y" if token.endswith("ies") else token[:-1]


def _phrases_rewritten(tokens: list[str]) -> list[str]:
    """Fixed phrasings replaced left to right ("for all" as "for", "prove that" dropped)."""
    result: list[str] = []
    position = 0
    while position < len(tokens):
        for phrase, replacement in PHRASES:
            if tuple(tokens[position : position + len(phrase)]) == phrase:
                result.extend(replacement)
                position += len(phrase)
                break
        else:
            result.append(tokens[position])
            position += 1
    return result


def _declarations_first(tokens: list[str]) -> list[str]:
    """Reorder "for even $x, y$" as "for $x, y$ even", the order of "$x$ and $y$ are even"."""
    result, position = [], 0
    while position < len(tokens):
        if tokens[position] != "for":
            result.append(tokens[position])
            position += 1
            continue
        words_end = position + 1
        while words_end < len(tokens) and _is_word(tokens[words_end]):
            words_end += 1
        names_end = _variable_list_end(tokens, words_end)
        if words_end == position + 1 or names_end == words_end:
            result.append("for")
            position += 1
            continue
        result.extend(["for", *tokens[words_end:names_end], *tokens[position + 1 : words_end]])
        position = names_end
    return result


def _variable_list_end(tokens: list[str], start: int) -> int:
    """Where the list of distinct variables at `start` ("x, y", "a and b") ends; `start` if none."""
    end, position, names = start, start, set()
    while position < len(tokens) and _is_variable(tokens[position]) and tokens[position] not in names:
        names.add(tokens[position])
        end = position + 1
        if end + 1 < len(tokens) and tokens[end] in (",", "and") and _is_variable(tokens[end + 1]):
            position = end + 1
        else:
            break
    return end


def _without_appositions(tokens: list[str]) -> list[str]:
    """Drop the noun of "the sum $x+y$", "an integer $n$": the formula says it."""
    kept = []
    for position, token in enumerate(tokens):
        before = tokens[position - 1] if position > 0 else ""
        after = tokens[position + 1] if position + 1 < len(tokens) else ""
        if token in APPOSITION_NOUNS and before in ARTICLES and _starts_formula(after):
            continue
        kept.append(token)
    return kept


def _without_fillers(tokens: list[str]) -> list[str]:
    """Drop punctuation, filler words and the "and" of a variable list ("$a$ and $b$")."""
    kept = []
    for position, token in enumerate(tokens):
        before = tokens[position - 1] if position > 0 else ""
        after = tokens[position + 1] if position + 1 < len(tokens) else ""
        listing = token == "and" and _is_variable(before) and _is_variable(after)
        if token in PUNCTUATION or token in FILLER_WORDS or listing:
            continue
        kept.append(token)
    return kept


def _variables_renamed(tokens: list[str]) -> list[str]:
    """Variables as #1, #2, ... by first appearance; a letter only ever applied (`f(x)`) is a function name."""
    applied_only = {token for token in tokens if _is_variable(token)} - {
        token for token, after in zip(tokens, [*tokens[1:], ""]) if _is_variable(token) and after != "("
    }
    names: dict[str, str] = {}
    for token in tokens:
        if _is_variable(token) and token not in applied_only:
            names.setdefault(token, f"#{len(names) + 1}")
    return [names.get(token, token) for token in tokens]


def _is_word(token: str) -> bool:
    return len(token) > 1 and token.isascii() and token.isalpha()


def _is_variable(token: str) -> bool:
    # Any single letter: Latin, or Greek written as a command (\epsilon) or as a character (ε).
    return (len(token) == 1 and token.isalpha()) or token in GREEK_VARIABLES


def _starts_formula(token: str) -> bool:
    return _is_variable(token) or token[:1].isdigit() or token.startswith("\\") or token == "("


@dataclass(frozen=True)
class Merge:
    kept: str
    copies: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class Deduplication:
    """The lemmas left, with dependencies rewired, and what was merged or dropped."""

    lemmas: list[Lemma]
    merges: tuple[Merge, ...] = ()
    goal_restatements: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.merges or self.goal_restatements)

    def in_words(self) -> str:
        """E.g. "merged L5, L7 into L3 (same statement up to renamed variables); dropped L9 (restates the goal)"."""
        parts = [f"merged {', '.join(merge.copies)} into {merge.kept} ({merge.reason})" for merge in self.merges]
        if self.goal_restatements:
            verb = "restates" if len(self.goal_restatements) == 1 else "restate"
            parts.append(f"dropped {', '.join(self.goal_restatements)} ({verb} the goal)")
        return "; ".join(parts)


def deduplicate_lemmas(lemmas: Sequence[Lemma], goal_statements: Sequence[str]) -> Deduplication:
    """Drop lemmas restating a goal statement, merge copies into their first occurrence, in plan order."""
    goal_forms = {normalise_statement(statement) for statement in goal_statements if statement.strip()}
    first_with_form: dict[str, Lemma] = {}
    copies: dict[str, list[Lemma]] = {}
    # A dropped id maps to the lemma that replaces it, or to None when nothing can (the goal).
    replaced_by: dict[str, str | None] = {}
    restatements = []
    for lemma in lemmas:
        form = _comparison_form(lemma.statement)
        if form in goal_forms:
            replaced_by[lemma.id] = None
            restatements.append(lemma.id)
            continue
        kept = first_with_form.setdefault(form, lemma)
        if kept is not lemma:
            replaced_by[lemma.id] = kept.id
            copies.setdefault(kept.id, []).append(lemma)
    kept_lemmas = [_rewired(lemma, replaced_by) for lemma in lemmas if lemma.id not in replaced_by]
    merges = tuple(
        Merge(
            kept=kept.id, copies=tuple(copy.id for copy in copies[kept.id]), reason=_merge_reason(kept, copies[kept.id])
        )
        for kept in first_with_form.values()
        if kept.id in copies
    )
    return Deduplication(lemmas=kept_lemmas, merges=merges, goal_restatements=tuple(restatements))


def _comparison_form(statement: str) -> str:
    # A statement of filler words only has an empty form; it is compared as written, not equal to every other.
    return normalise_statement(statement) or statement.strip()


def _rewired(lemma: Lemma, replaced_by: dict[str, str | None]) -> Lemma:
    """Dependencies on a dropped copy point to the kept lemma; on a goal restatement, nowhere."""
    depends_on: list[str] = []
    for dependency in lemma.depends_on:
        target = replaced_by.get(dependency, dependency)
        if target is not None and target != lemma.id and target not in depends_on:
            depends_on.append(target)
    return lemma if depends_on == lemma.depends_on else lemma.model_copy(update={"depends_on": depends_on})


def _merge_reason(kept: Lemma, copies: list[Lemma]) -> str:
    as_written = normalise_statement(kept.statement, rename_variables=False)
    if all(normalise_statement(copy.statement, rename_variables=False) == as_written for copy in copies):
        return "same statement up to wording"
    return "same statement up to renamed variables"
