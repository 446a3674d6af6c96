"""Turn whatever the writer model returned into a document body that compiles.

`extract_latex_body` composes small rewrites, each a named function. Verbatim text,
URLs, comments and macro definitions are masked early (texscan.mask) so that the
later rewrites only ever see live LaTeX, and are put back at the very end.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from lemmata.latex import escapes, markdown, mathmode, repair, textmath
from lemmata.latex.environments import (
    KNOWN_ENVIRONMENTS,
    code_environments_to_verbatim,
    declared_theorem_titles,
    defined_environment_names,
    drop_environments,
    normalize_environments,
)
from lemmata.latex.texscan import (
    ESCAPE,
    mandatory_argument_end,
    mask,
    matching_brace,
    skip_optional_arguments,
    unescaped_positions,
    unmask,
)
from lemmata.latex.unicode_symbols import replace_unicode_symbols

_FENCE_LINE = re.compile(r"^[ \t]*```[ \t]*(?P<language>[\w+-]*)[^\n]*(?:\n|\Z)", re.M)
_LATEX_FENCE_LANGUAGES = {"latex", "tex", ""}
# Conversational lines around an unfenced answer; narrow on purpose, so that a paper's
# own first sentence is never taken for chat.
_CHAT_OPENING = re.compile(
    r"\A\s*(?:(?:Certainly|Sure|Of course|Absolutely|Okay|OK)[!,.][^\n\\$]*"
    r"|(?:Here(?:'s| is| are)|Below (?:is|are))\b[^\n\\$]*:)[ \t]*\n"
)
_CHAT_CLOSING = re.compile(r"\n\s*(?:Let me know|I hope this|Hope this|Feel free)\b[^\n\\$]*\s*\Z")
# The unfinished last token of a cut-off answer: \nabl, \begin{assum, \begin{lemma}[Smoo.
_TRUNCATED_TAIL = re.compile(r"(?:\\(?:begin|end)[ \t]*\{[^{}\n]*|\\[A-Za-z@]*|(?<!\\)\[[^\]\n]*)\Z")
# Commands an answer may well end with, which are not taken for a cut-off one.
_COMPLETE_LAST_COMMANDS = {
    "qed",
    "QED",
    "qedhere",
    "blacksquare",
    "square",
    "Box",
    "par",
    "bigskip",
    "medskip",
    "smallskip",
    "newpage",
    "clearpage",
    "hfill",
    "noindent",
    "appendix",
    "unverified",
    "dots",
    "ldots",
}
_HTML_ENTITIES = {"&amp;": "&", "&lt;": "<", "&gt;": ">", "&nbsp;": "~"}

# Commands we remove, with how many {..} arguments each takes. Front matter and the
# bibliography come from document.py; the rest is illegal or useless in a body.
_REMOVED_COMMANDS: dict[str, int] = {
    "documentclass": 1,
    "usepackage": 1,
    "RequirePackage": 1,
    "newtheorem": 2,
    "theoremstyle": 1,
    "newtheoremstyle": 9,
    "DeclareUnicodeCharacter": 2,
    "geometry": 1,
    "crefname": 3,
    "Crefname": 3,
    "title": 1,
    "author": 1,
    "date": 1,
    "thanks": 1,
    "maketitle": 0,
    "affiliation": 1,
    "affil": 1,
    "institute": 1,
    "address": 1,
    "email": 1,
    "keywords": 1,
    "bibliography": 1,
    "bibliographystyle": 1,
    "printbibliography": 0,
    "addbibresource": 1,
    "input": 1,
    "include": 1,
    "includeonly": 1,
    "includegraphics": 1,
    "usetikzlibrary": 1,
    "tikzset": 1,
    "pgfplotsset": 1,
    "endhead": 0,
    "endfirsthead": 0,
    "endfoot": 0,
    "endlastfoot": 0,
}
_TRAILING_OPTIONAL = {"newtheorem"}  # \newtheorem{a}{A}[section]
_KEYED_COMMAND = re.compile(
    r"\\(label|ref|eqref|pageref|cref|Cref|crefrange|Crefrange|autoref|nameref|cite|citep|citet"
    r"|citealp|citealt|citeauthor|citeyear|citeyearpar|citenum|Citet|Citep|nocite|hyperlink"
    r"|hypertarget|bibitem|hyperref)(?![A-Za-z@])\*?"
)
_KEY_ARGUMENT = re.compile(r"\s*\{(?:[^{}\n]*\}|[^{}\s]*)")
_DEFINING_COMMANDS = re.compile(
    r"\\(newcommand|renewcommand|providecommand|DeclareRobustCommand|DeclareMathOperator"
    r"|newenvironment|renewenvironment|[gex]?def"
    r"|(?:New|Renew|Provide|Declare)Document(?:Command|Environment))(?![A-Za-z@])(\*?)"
)
_OVERRIDABLE_DEFINITION = re.compile(r"\\(newcommand|renewcommand|DeclareRobustCommand|DeclareMathOperator)(\*?)\s*")
# How many {..} groups follow the defined name: argument spec, body, end code.
_DEFINITION_BODIES = {"DocumentEnvironment": 3, "DocumentCommand": 2, "environment": 2}


def extract_latex_body(model_text: str) -> str:
    """A safe LaTeX document body from a model's answer (fenced, full document or bare)."""
    text = drop_truncated_tail(normalize_input(model_text))
    text = drop_chat_lines(take_fenced_latex(text))
    titles = declared_theorem_titles(text)
    text = keep_document_body(text)
    stash: list[str] = []
    text = protect_verbatim(text, stash)
    text = protect_urls(text, stash)
    text = protect_reference_keys(text, stash)
    text = escape_percent_meant_as_text(text)
    text = protect_comments(text, stash)
    text = drop_shell_escapes(text)  # before definitions are masked: a macro's body runs too
    known = KNOWN_ENVIRONMENTS | defined_environment_names(text)
    text = protect_definitions(text, stash)
    text = drop_commands(text)
    text = drop_environments(text)
    text = code_environments_to_verbatim(text, stash)
    return _repair_structure(text, stash, titles, known)


def _repair_structure(text: str, stash: list[str], titles: Mapping[str, str], known: frozenset[str]) -> str:
    """The rewrites that run on live LaTeX once everything literal is masked."""
    text = markdown.convert_markdown_headings(text)
    text = normalize_environments(text, titles, known)
    text = markdown.convert_markdown_proofs(text)
    text = markdown.convert_markdown_lists(text)
    text = markdown.convert_markdown_bold(text)
    text = markdown.remove_end_of_proof_boxes(text)
    text = markdown.remove_qed_inside_proofs(text)
    text = fix_float_placement(text)
    text = repair.drop_captions_outside_floats(text)
    text = re.sub(r"\\chapter(?![A-Za-z@])", r"\\section", text)
    text = repair.remove_orphaned_end_tags(text)
    text = repair.close_open_environments(text)
    text = repair.remove_blank_lines_in_display_math(text)
    text = repair.repair_list_starts(text)
    text = repair.wrap_lonely_items(text)
    text = repair.balance_braces(text)
    text = re.sub(r"\\(?:begin|end)\{\s*\}", "", text)  # left by truncated tags
    text = repair.escape_currency_dollars(text)
    text = mathmode.repair_math(text)
    text = replace_unicode_symbols(text)
    text = escapes.escape_stray_hashes(text)
    text = escapes.escape_stray_ampersands(text)
    # Only now is it known where math is: repair_math closed it, and symbols are commands.
    text = textmath.wrap_math_in_text(text)
    text = textmath.escape_scripts_in_text(text)
    text = repair.drop_line_breaks_at_paragraph_start(text)
    text = unmask(text, stash)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


#: Control characters but tab and newline, DEL and the C1 controls: pdflatex stops at them ("Text
#: line contains an invalid character"), and NUL is our mask marker. A form feed is most often
#: `\f` of a `\frac` a JSON string read as an escape.
_CONTROL_CHARACTERS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def normalize_input(text: str) -> str:
    """Unix newlines, no control characters (NUL is our mask marker), no BOM, no HTML entities."""
    text = _CONTROL_CHARACTERS.sub("", text.replace("\r\n", "\n").replace("\r", "\n")).lstrip("\ufeff")
    for entity, char in _HTML_ENTITIES.items():
        text = text.replace(entity, char)
    return text


def drop_truncated_tail(text: str) -> str:
    """An answer cut off by the token limit ends mid-token: drop that half command or line.

    A last line left with an open brace, bracket or `$` goes whole (\\frac{\\epsilon
    cannot be completed); otherwise only an unfinished command or tag goes (\\nabl).
    """
    if re.search(r"(?:\s|```)\Z", text):
        return text  # ends cleanly
    head, _, last = text.rpartition("\n")
    unbalanced = last.count("{") > last.count("}") or last.count("[") > last.count("]")
    odd_math = "\\verb" not in last and len(unescaped_positions(last, "$")) % 2 == 1
    if head and (unbalanced or odd_math):
        return head + "\n"
    tail = _TRUNCATED_TAIL.search(text)
    if tail and tail.group(0).lstrip("\\") in _COMPLETE_LAST_COMMANDS:
        return text
    return text[: tail.start()] if tail else text


def drop_chat_lines(text: str) -> str:
    """Drop a conversational first line ('Sure! Here is the paper:') and last line ('Hope this helps')."""
    text = _CHAT_OPENING.sub("", text, count=1)
    return _CHAT_CLOSING.sub("", text, count=1)


@dataclass(frozen=True)
class _Fence:
    language: str
    content: str
    start: int
    end: int


def _top_level_fences(text: str) -> list[_Fence]:
    """The outermost ``` blocks. Inside one, a fence line naming a language opens a nested
    block (a code sample in the paper) and a bare fence line closes the innermost block;
    an unclosed block runs to the end of the text."""
    fences: list[_Fence] = []
    depth, opening = 0, None
    for line in _FENCE_LINE.finditer(text):
        if depth == 0:
            depth, opening = 1, line
        elif line.group("language"):
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                assert opening is not None  # set whenever depth > 0
                fences.append(
                    _Fence(opening.group("language"), text[opening.end() : line.start()], opening.start(), line.end())
                )
    if depth:
        assert opening is not None  # set whenever depth > 0
        fences.append(_Fence(opening.group("language"), text[opening.end() :], opening.start(), len(text)))
    return fences


def take_fenced_latex(text: str) -> str:
    """The content of ```latex / ```tex / ``` fences (joined), else text with code fences as verbatim.
    Code fences nested in a LaTeX fence become verbatim too."""
    fences = _top_level_fences(text)
    latex = [fence.content for fence in fences if fence.language.lower() in _LATEX_FENCE_LANGUAGES]
    if latex:
        return code_fences_as_verbatim("\n\n".join(part.strip("\n") for part in latex))
    return code_fences_as_verbatim(text)


def unwrap_latex_fences(text: str) -> str:
    """Each top-level ```latex / ```tex / ``` block replaced by its content; code fences inside it,
    and code blocks of other languages, stay for `take_fenced_latex` to make verbatim."""
    for fence in reversed(_top_level_fences(text)):
        if fence.language.lower() in _LATEX_FENCE_LANGUAGES:
            text = text[: fence.start] + fence.content + text[fence.end :]
    return text


def code_fences_as_verbatim(text: str) -> str:
    """Each top-level ``` block as a verbatim environment."""
    for fence in reversed(_top_level_fences(text)):
        verbatim = "\\begin{verbatim}\n" + fence.content.rstrip("\n") + "\n\\end{verbatim}\n"
        text = text[: fence.start] + verbatim + text[fence.end :]
    return text


def keep_document_body(text: str) -> str:
    """Only what lies between \\begin{document} and \\end{document}, keeping the preamble's macros."""
    begin = re.search(r"\\begin\s*\{document\}", text)
    end = re.search(r"\\end\s*\{document\}", text)
    if begin is None:
        return text[: end.start()] if end else text
    preamble = text[: begin.start()]
    definitions = [preamble[start:stop] for start, stop, complete in _definition_spans(preamble) if complete]
    body_end = end.start() if end and end.start() > begin.end() else len(text)
    return "\n".join(definitions + [text[begin.end() : body_end]])


def protect_verbatim(text: str, stash: list[str]) -> str:
    """Mask verbatim environments (closing an unclosed one) and \\verb|..|."""

    def environment(match: re.Match[str]) -> str:
        """The masked verbatim block, closed if the answer never closed it."""
        block = match.group(0)
        if not match.group(2):
            block = block.rstrip("\n") + "\n\\end{" + match.group(1) + "}\n"
        return mask(block, stash)

    text = re.sub(r"\\begin\{(verbatim\*?)\}.*?(\\end\{\1\}|\Z)", environment, text, flags=re.S)
    text = re.sub(r"\\end\{verbatim\*?\}", "", text)  # orphans left by the pass above
    return re.sub(r"\\verb\*?([^\sA-Za-z*])[^\n]*?\1", lambda m: mask(m.group(0), stash), text)


def protect_urls(text: str, stash: list[str]) -> str:
    """Mask the URL argument of \\url and \\href: `%`, `#` and `&` are legal there."""
    pieces, position = [], 0
    for match in re.finditer(r"\\(?:url|href)\s*(?=\{)", text):
        end = matching_brace(text, match.end())
        if match.start() < position or end is None:
            continue
        pieces += [text[position : match.start()], mask(text[match.start() : end], stash)]
        position = end
    return "".join(pieces) + text[position:]


def protect_reference_keys(text: str, stash: list[str]) -> str:
    """Mask label, reference and citation keys (`_` or `&` there belong to the key).

    A key whose closing brace is missing gets one after its last non-blank character.
    """
    pieces, position = [], 0
    for match in _KEYED_COMMAND.finditer(text):
        if match.start() < position:
            continue
        end = skip_optional_arguments(text, match.end())
        command = text[match.start() : end]
        if match.group(1) != "hyperref":
            key = _KEY_ARGUMENT.match(text, end)
            end = key.end() if key else end
            key_text = key.group(0).strip() if key else ""
            if not key_text.endswith("}"):
                key_text += "}"  # the closing brace the model forgot
            command = command + key_text if key_text.strip("{}") else ""  # \cref{} is an error
        pieces += [text[position : match.start()], mask(command, stash) if command else ""]
        position = end
    return "".join(pieces) + text[position:]


def escape_percent_meant_as_text(text: str) -> str:
    """`50%`, `5 %` and `about % of` (a number the model left out) mean percent, not a comment.
    Any other `%` stays a comment: mid-line comments after words are common LaTeX."""
    text = re.sub(r"(?<=\d)([ \t]*)%", r"\1\\%", text)
    return re.sub(r"(?<=\w[ \t])%(?=[ \t]+of\b)", r"\\%", text)


def protect_comments(text: str, stash: list[str]) -> str:
    """Mask comments (from an unescaped % to the end of the line)."""
    pattern = re.compile(ESCAPE + r"|%[^\n]*")
    return pattern.sub(lambda m: m.group(0) if m.group(0)[0] == "\\" else mask(m.group(0), stash), text)


def protect_definitions(text: str, stash: list[str]) -> str:
    """Mask macro and environment definitions, rewritten so they never clash with ours."""
    pieces, position = [], 0
    for start, end, complete in _definition_spans(text):
        if start < position:
            continue
        # A definition whose braces never close would swallow the rest of the paper.
        replacement = mask(_safe_definition(text[start:end]), stash) if complete else ""
        pieces += [text[position:start], replacement]
        position = end
    return "".join(pieces) + text[position:]


def _definition_spans(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, complete) of each definition; an unclosed one ends at its line end."""
    spans = []
    for match in _DEFINING_COMMANDS.finditer(text):
        end = _definition_end(text, match.group(1), match.end())
        if end is None:
            line_end = text.find("\n", match.end())
            spans.append((match.start(), len(text) if line_end < 0 else line_end, False))
        else:
            spans.append((match.start(), end, True))
    return spans


def _definition_end(text: str, command: str, index: int) -> int | None:
    """Where a definition's last argument ends, or None when its braces never close."""
    if command.endswith("def"):
        name = re.compile(r"\s*" + ESCAPE).match(text, index)
        body_start = text.find("{", name.end()) if name else -1
        return matching_brace(text, body_start) if body_start >= 0 else None
    end = mandatory_argument_end(text, index)  # the name
    bodies = next((n for suffix, n in _DEFINITION_BODIES.items() if command.endswith(suffix)), 1)
    for _ in range(bodies):
        if end is None:
            return None
        end = mandatory_argument_end(text, skip_optional_arguments(text, end))
    return end


def _safe_definition(definition: str) -> str:
    """Make a definition override instead of failing on a name that is already taken."""
    match = _OVERRIDABLE_DEFINITION.match(definition)
    if match is None:
        return _safe_environment_definition(definition)
    name_end = mandatory_argument_end(definition, match.end())
    name = definition[match.end() : name_end].strip().strip("{}").strip()
    if not re.fullmatch(r"\\(?:[A-Za-z@]+|.)", name):
        return ""
    rest = definition[name_end:]
    if match.group(1) == "DeclareMathOperator":
        star = "*" if match.group(2) else ""
        return f"\\providecommand{{{name}}}{{}}\\renewcommand{{{name}}}{{\\operatorname{star}{rest.strip()}}}"
    return f"\\providecommand{{{name}}}{{}}\\renewcommand{match.group(2)}{{{name}}}{rest}"


def _safe_environment_definition(definition: str) -> str:
    """(Re)define an environment with the command that fits whether the preamble has it."""
    if re.match(r"\\(?:New|Renew|Provide)Document", definition):  # Declare... overrides
        return re.sub(r"^\\(?:New|Renew|Provide)", r"\\Declare", definition)
    match = re.match(r"\\(new|renew)environment(\*?\s*\{([^{}]+)\}[\s\S]*)", definition)
    if match is None:
        return definition
    known = match.group(3).strip() in KNOWN_ENVIRONMENTS
    return ("\\renewenvironment" if known else "\\newenvironment") + match.group(2)


#: What runs a shell where TeX is allowed to (a researcher compiling with -shell-escape; in
#: lemmata's box nothing does): `\write18{..}` (any spacing, `\immediate` or not), `\ShellEscape`,
#: Lua's `\directlua` and kin, each with its argument; and the pipe of `\input|"cmd"`.
_SHELL_COMMAND = re.compile(
    r"(?:\\immediate\s*)?\\write\s*18\s*(?=\{)|\\(?:ShellEscape|directlua|latelua|luaexec|luadirect)(?![A-Za-z@])\s*(?=\{)"
)
_PIPE_INPUT = re.compile(r'\\(?:@@)?input\s*(\{\s*)?\|\s*("[^"\n]*"|[^\s{}]*)\s*\}?')


def drop_shell_escapes(text: str) -> str:
    """The shell commands of `_SHELL_COMMAND` and `_PIPE_INPUT` removed with what they would run.
    Spellings TeX assembles at run time (`\\csname`, `^^5c`) are not seen: the box is the defence,
    this keeps the delivered .tex from carrying the obvious ones to a researcher's machine."""
    text = _PIPE_INPUT.sub("", text)
    pieces, position = [], 0
    for match in _SHELL_COMMAND.finditer(text):
        if match.start() < position:
            continue
        end = matching_brace(text, match.end())
        pieces.append(text[position : match.start()])
        position = end if end is not None else len(text)  # unclosed: it runs to the end
    return "".join(pieces) + text[position:]


def drop_commands(text: str) -> str:
    """Remove preamble-only, front-matter, bibliography and file-reading commands."""
    text = re.sub(r"\\(?:input|include)[ \t]+[^\s{}\\]+", "", text)  # \input file.tex
    text = re.sub(r"\\tikz(?![A-Za-z@])[^;]*;", "", text)  # an inline picture: \tikz \draw ...;
    pattern = re.compile(r"\\(" + "|".join(_REMOVED_COMMANDS) + r")(?![A-Za-z@])\*?")
    pieces, position = [], 0
    for match in pattern.finditer(text):
        if match.start() < position:
            continue
        end = _arguments_end(text, match.group(1), match.end())
        pieces.append(text[position : match.start()])
        position = end
    return "".join(pieces) + text[position:]


def _arguments_end(text: str, command: str, index: int) -> int:
    """Index after the command's optional and mandatory arguments (as many as are present)."""
    end = index
    for _ in range(_REMOVED_COMMANDS[command]):
        following = mandatory_argument_end(text, skip_optional_arguments(text, end))
        if following is None or text[skip_optional_arguments(text, end) : following].lstrip()[:1] != "{":
            break
        end = following
    if command in _TRAILING_OPTIONAL or _REMOVED_COMMANDS[command] == 0:
        end = skip_optional_arguments(text, end)
    return end


def fix_float_placement(text: str) -> str:
    """Keep only the placement letters LaTeX knows: `[H]` needs the float package."""

    def placement(match: re.Match[str]) -> str:
        """The begin tag with only the valid placement letters."""
        letters = "".join(char for char in match.group(2) if char in "htbp!")
        return "\\begin{" + match.group(1) + "}" + (f"[{letters}]" if letters.strip("!") else "")

    return re.sub(r"\\begin\{(figure\*?|table\*?)\}[ \t]*\[([^\]\n]*)\]", placement, text)
