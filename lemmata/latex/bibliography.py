"""Citation keys, BibTeX rendering, and removal of citations to papers we do not have."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from urllib.parse import quote

from lemmata.artifacts import PaperRecord
from lemmata.latex.unicode_symbols import replace_unicode_symbols

# Letters NFKD does not split into a base letter plus accents.
_TRANSLITERATIONS = {
    "ß": "ss",
    "æ": "ae",
    "ø": "o",
    "ł": "l",
    "đ": "d",
    "þ": "th",
    "œ": "oe",
    "ð": "d",
    "ı": "i",
    "ŋ": "n",
    "ħ": "h",
}
_NAME_SUFFIXES = {"jr", "sr", "ii", "iii", "iv", "v"}
_CITE_COMMAND = re.compile(
    r"(?P<lead>[ \t]*~?|~)?\\(?P<command>cite|citep|citet|citealp|citealt|citeauthor|citeyear"
    r"|citeyearpar|citenum|Citet|Citep|Citealp|Citeauthor|nocite)(?P<star>\*?)"
    r"(?P<options>(?:\s*\[[^\[\]]*\]){0,2})\s*\{(?P<keys>[^{}]*)\}"
)
# BibTeX counts every brace, escaped or not, so braces in a field must become commands.
_BIBTEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "{": r"\textbraceleft{}",
    "}": r"\textbraceright{}",
    "$": r"\$",
    "&": r"\&",
    "%": r"\%",
    "#": r"\#",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
_BIBTEX_PATTERN = re.compile("|".join(re.escape(char) for char in _BIBTEX_SPECIALS))


def ascii_letters(text: str) -> str:
    """Lowercase ASCII letters and digits of text, accents transliterated (Müller → muller)."""
    text = "".join(_TRANSLITERATIONS.get(char, char) for char in text.lower())
    decomposed = unicodedata.normalize("NFKD", text)
    return re.sub(r"[^a-z0-9]", "", decomposed.encode("ascii", "ignore").decode("ascii"))


def last_name(author: str) -> str:
    """The family name of 'Last, First' or 'First Middle Last' (suffixes like Jr. skipped)."""
    author = author.replace("{", "").replace("}", "").strip()
    if "," in author:
        return author.split(",", 1)[0].strip()
    words = author.split()
    while len(words) > 1 and ascii_letters(words[-1]) in _NAME_SUFFIXES:
        words.pop()
    return words[-1] if words else ""


def citation_key_base(authors: list[str], year: int | None) -> str:
    """First author's last name plus year, e.g. 'diaz2020'; 'unknown' without a usable author."""
    first = next((author for author in authors if author.strip()), "")
    name = ascii_letters(last_name(first)) or "unknown"
    return name + ("" if year is None else str(year))


def _suffix(number: int) -> str:
    """1 → a, 26 → z, 27 → aa: the letters appended to the n-th repeat of a key."""
    letters = ""
    while number > 0:
        number, remainder = divmod(number - 1, 26)
        letters = chr(ord("a") + remainder) + letters
    return letters


def assign_citation_keys(records: Sequence[PaperRecord]) -> list[tuple[str, PaperRecord]]:
    """Unique keys in order: smith2020, smith2020a, smith2020b, ..."""
    used: set[str] = set()
    keyed = []
    for record in records:
        base = citation_key_base(record.authors, record.year)
        key, repeat = base, 0
        while key in used:
            repeat += 1
            key = base + _suffix(repeat)
        used.add(key)
        keyed.append((key, record))
    return keyed


def escape_bibtex(text: str) -> str:
    """Field text that BibTeX parses (balanced braces) and LaTeX prints literally."""
    text = re.sub(r"\s+", " ", text).strip()
    text = _BIBTEX_PATTERN.sub(lambda match: _BIBTEX_SPECIALS[match.group(0)], text)
    return replace_unicode_symbols(text)


def _escape_author(author: str) -> str:
    """One author; a name containing ' and ' is braced so BibTeX keeps it whole."""
    escaped = escape_bibtex(author)
    return "{" + escaped + "}" if re.search(r"\sand\s", escaped, re.IGNORECASE) else escaped


def safe_url(url: str) -> str:
    """A URL with the characters that would break BibTeX or \\url percent-encoded."""
    return quote(url.strip(), safe="/:?=&#%+-_.~,;@!$*'()[]")


def render_bibtex_entry(key: str, record: PaperRecord) -> str:
    """One @article (with a venue) or @misc entry."""
    fields = [("title", "{" + escape_bibtex(record.title) + "}")]
    authors = [_escape_author(author) for author in record.authors if author.strip()]
    if authors:
        fields.append(("author", " and ".join(authors)))
    else:  # plainnat labels an author-less entry by this field, not by "unk" from the key
        fields.append(("key", escape_bibtex(record.title) or "Anonymous"))
    if record.year is not None:
        fields.append(("year", str(record.year)))
    url = safe_url(record.url) if record.url.strip() else ""
    if record.venue.strip():
        fields.append(("journal", escape_bibtex(record.venue)))
        if url:
            fields.append(("url", url))
    elif url:
        fields.append(("howpublished", "\\url{" + url + "}"))
    entry_type = "article" if record.venue.strip() else "misc"
    lines = [f"  {name} = {{{value}}}," for name, value in fields]
    return "\n".join([f"@{entry_type}{{{key},", *lines, "}"])


def render_bibtex(keyed: list[tuple[str, PaperRecord]]) -> str:
    """The .bib text for keyed records, entries separated by blank lines."""
    return "".join(render_bibtex_entry(key, record) + "\n\n" for key, record in keyed)


def remove_unknown_citations(latex: str, known_keys: set[str]) -> tuple[str, list[str]]:
    """Drop citation keys not in known_keys (and commands left empty); return the removed keys."""
    removed: list[str] = []

    def rewrite(match: re.Match[str]) -> str:
        """One citation command with only the known keys (or nothing)."""
        keys = [key.strip() for key in match.group("keys").split(",") if key.strip()]
        kept = [key for key in keys if key in known_keys or key == "*" and match["command"] == "nocite"]
        removed.extend(key for key in keys if key not in kept and key not in removed)
        if not kept:
            return ""
        lead = match.group("lead") or ""
        head = f"{lead}\\{match['command']}{match['star']}{match['options']}"
        return head + "{" + ",".join(kept) + "}"

    return _CITE_COMMAND.sub(rewrite, latex), removed


def cited_keys(latex: str) -> list[str]:
    """The keys the citation commands of `latex` name, each once, in order of first use."""
    keys = (key.strip() for match in _CITE_COMMAND.finditer(latex) for key in match.group("keys").split(","))
    return list(dict.fromkeys(key for key in keys if key and key != "*"))
