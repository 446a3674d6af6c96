"""Markdown habits in model-written LaTeX: headings, emphasis, lists, proofs and QED boxes."""

from __future__ import annotations

import re

from lemmata.latex.environments import SECTION_CLOSES
from lemmata.latex.texscan import ENV_TAG

_HEADING = re.compile(r"^[ \t]{0,3}(#{1,6})[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_HEADING_COMMANDS = {1: "section", 2: "subsection", 3: "subsubsection"}
_HEADING_NUMBER = re.compile(r"^(?:\d+(?:\.\d+)*\.?|[IVX]+\.)[ \t]+")
_EMPHASIS = re.compile(r"(?<![^\s(\[\"'])\*(?=[^\s*])([^\n*]*?[^\s*\\])\*(?![^\s.,;:!?)\]\"'])")
_DANGLING_BOLD = re.compile(r"^([ \t]*)\*\*(?=[A-Za-z0-9])([^*$\\\n{}]*[^*$\\\s{}])[ \t]*$", re.MULTILINE)
_BOLD = re.compile(r"(?<![^\s(\[\"'])\*\*(?=[^\s*])([^\n]*?[^\s*\\])\*\*(?![^\s.,;:!?)\]\"'])")

# An opening line such as `**Proof.**`, `**Proof of Lemma 2:**`, `\textbf{Proof.}` or
# a bare `Proof.`; group "title" is what follows the word Proof.
_PROOF_OPENER = re.compile(
    r"^[ \t]*(?P<open>\*\*|__|\*|_|\\textbf\{|\\textit\{|\\emph\{)?[ \t]*"
    r"(?P<word>[Pp]roof|PROOF)(?P<title>[ \t]+(?:of|sketch|idea)\b[^\n*_{}]*?)?[ \t]*[.:]?[ \t]*"
    r"(?(open)(?:\*\*|__|\*|_|\})[ \t]*[.:]?|[.:])",
    re.MULTILINE,
)
_BOX_COMMAND = r"\\(?:square|blacksquare|Box|qed|qedsymbol)(?![A-Za-z])"
_BOX = (
    r"(?:\$\$\s*" + _BOX_COMMAND + r"\s*\$\$|\\\[\s*" + _BOX_COMMAND + r"\s*\\\]|\\qedsymbol(?![A-Za-z])"
    r"|\$\s*(?:\\hfill\s*)?" + _BOX_COMMAND + r"\s*\$|\\\(\s*" + _BOX_COMMAND + r"\s*\\\)"
    r"|\\ensuremath\{" + _BOX_COMMAND + r"\}|∎|□|■|\(?Q\.E\.D\.?\)?)"
)
_SPACING = r"(?:\s|~|\\hfill|\\hspace\*?\{[^{}\n]*\}|\\q?quad(?![A-Za-z])|\\,|\\ )*"
# Tokens that end a markdown proof: its box, or the start of the next block.
_PROOF_TOKEN = re.compile(
    r"(?P<marker>(?:\\hfill\s*)?(?:" + _BOX + r"|\\qed(?![A-Za-z])))"
    r"|\\(?P<kind>begin|end)[ \t]*\{(?P<name>[^{}\n]*)\}"
    r"|(?P<display_open>\\\[)|(?P<display_close>\\\])"
    r"|(?P<block>\\(?:part|section|subsection|subsubsection|paragraph|appendix)(?![A-Za-z@])"
    r"|^[ \t]*\*\*(?:Theorem|Lemma|Proposition|Corollary|Definition|Claim)\b)",
    re.MULTILINE,
)


def convert_markdown_headings(text: str) -> str:
    """Markdown headings as sections; the shallowest level used becomes \\section.

    Models often start at `##`; mapping that to \\subsection would number them 0.1, 0.2.
    """
    levels = [len(match.group(1)) for match in _HEADING.finditer(text)]
    shift = min(levels, default=1) - 1

    def heading(match: re.Match[str]) -> str:
        """The sectioning command for one heading line."""
        command = _HEADING_COMMANDS.get(len(match.group(1)) - shift, "subsubsection")
        title = _HEADING_NUMBER.sub("", match.group(2).replace("**", "").strip())
        return "\\" + command + "{" + title + "}"

    return _HEADING.sub(heading, text)


def convert_markdown_bold(text: str) -> str:
    """`**words**` → \\textbf{words} and `*words*` → \\emph{words}, unless the stars could be math.
    A line that opens bold and never closes it is bold to its end: an answer cut off at its token
    limit in the middle of "**Step 5: Conclusion**" (the embedded smoke test, 2026-11-26)."""
    text = _BOLD.sub(lambda match: _wrapped("\\textbf", match), text)
    text = _DANGLING_BOLD.sub(lambda match: match.group(1) + "\\textbf{" + match.group(2) + "}", text)
    return _EMPHASIS.sub(lambda match: _wrapped("\\emph", match), text)


def _wrapped(command: str, match: re.Match[str]) -> str:
    """command{inner}, or the match unchanged when its inner text is not plain (f^{**}, a*b*c)."""
    inner = match.group(1)
    if inner.count("$") % 2 or inner.count("{") != inner.count("}"):
        return match.group(0)
    return command + "{" + inner + "}"


def convert_markdown_proofs(text: str) -> str:
    """A `**Proof.**` line opens a proof environment that ends at its box or at the next block."""
    position = 0
    while (opener := _PROOF_OPENER.search(text, position)) is not None:
        if _inside_proof(text, opener.start()):
            position = opener.end()
            continue
        begin = "\\begin{proof}" + _proof_title(opener.group("title"))
        text = text[: opener.start()] + begin + text[opener.end() :]
        position = opener.start() + len(begin)
        text = _close_markdown_proof(text, position)
    return text


def _proof_title(title: str | None) -> str:
    """`[Proof of Lemma 2]` for ' of Lemma 2', nothing for a bare Proof."""
    if not title or not title.strip():
        return ""
    return "[{Proof " + title.strip().rstrip(".:") + "}]"


def _inside_proof(text: str, index: int) -> bool:
    """Whether index lies inside a proof environment that is already open."""
    depth = 0
    for match in ENV_TAG.finditer(text, 0, index):
        if match.group(2).strip() == "proof":
            depth += 1 if match.group(1) == "begin" else -1
    return depth > 0


def _close_markdown_proof(text: str, start: int) -> str:
    """Replace the proof's end box by \\end{proof}, or insert one before the next block."""
    next_opener = _PROOF_OPENER.search(text, start)
    limit = next_opener.start() if next_opener else len(text)
    depth = 0  # environments and displays opened inside the proof
    for match in _PROOF_TOKEN.finditer(text, start, limit):
        if match.group("marker") and depth == 0:
            return text[: match.start()] + "\\end{proof}" + text[match.end() :]
        if match.group("marker"):
            continue
        opens = match.group("display_open") or (
            match.group("kind") == "begin" and match.group("name").strip() not in SECTION_CLOSES
        )
        if opens:
            depth += 1
        elif depth > 0 and (match.group("display_close") or match.group("kind") == "end"):
            depth -= 1
        else:
            return _insert_end_proof(text, match.start())
    return _insert_end_proof(text, limit)


def _insert_end_proof(text: str, index: int) -> str:
    """Insert \\end{proof} on its own line before index."""
    before = text[:index].rstrip()
    return before + "\n\\end{proof}\n" + text[index:].lstrip(" \t")


def remove_end_of_proof_boxes(text: str) -> str:
    """Drop hand-made QED boxes before \\end{proof}: amsthm prints its own."""
    rules = (
        (_SPACING + _BOX + r"\s*(?=\\end\{proof\})", "\n"),
        (
            _SPACING + _BOX_COMMAND + r"\s*(?=(?:\\\]|\\end\{(?:equation|align|gather)\*?\})\s*\\end\{proof\})",
            r" \\qedhere ",
        ),
        (_SPACING + _BOX_COMMAND + r"\s*(?=\$\s*\\end\{proof\})", ""),
    )
    previous = None
    while previous != text:
        previous = text
        for pattern, replacement in rules:
            text = re.sub(pattern, replacement, text)
    return text


def remove_qed_inside_proofs(text: str) -> str:
    """Drop \\qed inside proofs: the proof environment already ends with the QED box."""
    pieces: list[str] = []
    position, depth = 0, 0
    pattern = ENV_TAG.pattern + r"|\$\s*\\qed\s*\$|\\\(\s*\\qed\s*\\\)|\\qed(?![A-Za-z])"
    for match in re.finditer(pattern, text):
        if match.group(1) and match.group(2).strip() == "proof":
            depth += 1 if match.group(1) == "begin" else -1
        elif not match.group(1) and depth > 0:
            pieces.append(text[position : match.start()])
            position = match.end()
    pieces.append(text[position:])
    return "".join(pieces)


# Item lines, each with the indented lines that continue it ("1. **Given**:\n   We write a = 2m").
_LIST_BLOCK = re.compile(
    r"(?:^[ \t]*(?:[-*+]|\d+[.)])[ \t]+\S[^\n]*(?:\n|\Z)"
    r"(?:^[ \t]{2,}(?![-*+][ \t]|\d+[.)][ \t])\S[^\n]*(?:\n|\Z))*)+",
    re.MULTILINE,
)
_LIST_MARKER = re.compile(r"^[ \t]*(?:([-*+])|\d+[.)])[ \t]+", re.MULTILINE)
_FIRST_NUMBER = re.compile(r"\A[ \t]*(\d+)[.)]")
_NO_LIST_INSIDE = re.compile(r"(?:equation|align|alignat|flalign|gather|multline|eqnarray|tabular|array)\*?")


def convert_markdown_lists(text: str) -> str:
    """Runs of `- item` or `1. item` lines become itemize or enumerate (not inside math or tables);
    items indented under an item become a list inside it."""

    def as_list(match: re.Match[str]) -> str:
        """The list environment for one run of item lines, or the run unchanged."""
        block = match.group(0)
        if "\\\\" in block or _inside_math_or_table(text, match.start()):
            return block
        return _list_environment(block) or block

    return _LIST_BLOCK.sub(as_list, text)


#: How much deeper than its list's items a line must start to belong to an item's own list.
_NESTED_INDENT = 2


def _list_environment(block: str, nested: bool = False) -> str | None:
    """The environment of a run of item lines; None when its items mix bullets and numbers.
    Malformed model output, the embedded assembler (the README's main command, 2026-11-27): a
    numbered step with a bulleted list under it ("1. **Identify the objects:**\n   - Let a ...")
    was printed as text with its hyphens."""
    lines = block.rstrip("\n").split("\n")
    indent = min(_indent_of(line) for line in lines if _LIST_MARKER.match(line))
    items: list[tuple[str, list[str]]] = []  # each item line with the lines under it
    for line in lines:
        if _LIST_MARKER.match(line) and _indent_of(line) < indent + _NESTED_INDENT:
            items.append((line, []))
        elif items:
            items[-1][1].append(line)
        else:
            return None
    markers = [marker.group(1) for line, _ in items if (marker := _LIST_MARKER.match(line))]
    environment = "itemize" if all(markers) else "enumerate" if not any(markers) else None
    if environment is None:
        return None
    rendered = []
    for line, under in items:
        first_inner = next((n for n, inner in enumerate(under) if _LIST_MARKER.match(inner)), len(under))
        item = [_LIST_MARKER.sub(r"\\item ", line, count=1), *under[:first_inner]]
        if first_inner < len(under):
            inner = _list_environment("\n".join(under[first_inner:]) + "\n", nested=True)
            if inner is None:
                return None
            item.append(inner.rstrip("\n"))
        rendered.append("\n".join(item))
    items_text = "\n".join(rendered)
    counter = "" if nested else _continued_from(block)
    return f"\\begin{{{environment}}}{counter}\n{items_text}\n\\end{{{environment}}}\n"


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _continued_from(block: str) -> str:
    """For a numbered list that starts past 1, the counter setting that keeps its numbers: models
    write "1. ...", a display, "2. ...", which are separate lists here (malformed model output,
    the embedded model 2026-11-25: every step of a proof numbered 1)."""
    first = _FIRST_NUMBER.match(block)
    return f"\\setcounter{{enumi}}{{{int(first.group(1)) - 1}}}" if first and int(first.group(1)) > 1 else ""


def _inside_math_or_table(text: str, index: int) -> bool:
    """Whether index lies inside a display-math or tabular environment."""
    open_names: list[str] = []
    for match in ENV_TAG.finditer(text, 0, index):
        name = match.group(2).strip()
        if match.group(1) == "begin":
            open_names.append(name)
        elif name in open_names:
            open_names.remove(name)
    in_display = text.count("\\[", 0, index) > text.count("\\]", 0, index)
    return in_display or any(_NO_LIST_INSIDE.fullmatch(name) for name in open_names)
