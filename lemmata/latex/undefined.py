"""Commands a model uses without defining them (\\Tr, \\poly, \\QED) made printable.

One undefined command stops pdflatex. For each command name the body uses, a line before the
body defines it only if TeX does not know it (`\\ifdefined`, which, unlike `\\providecommand`,
leaves commands equal to `\\relax`, such as `\\protect`, alone). Every real command is kept as
it is, and an invented one prints its own name as an upright operator instead of failing. This
runs before the one compile: it is not a rescue after a failed one.

Names the paper's preamble defines get no such line: the delivered .tex of the README's command
opened with 25 of them, `\\begin`, `\\par` and `\\section` among them, a wall of no-ops for a
reader. The list is the one the LaTeX repair already keeps (mathcommands.py) and the text commands
below; a test compiles, under the paper's preamble, a check of each name that fails if TeX does
not know it.
"""

from __future__ import annotations

import re

from lemmata.latex.mathcommands import MATH_ONLY, SIZED_PAIR, TEXT_SAFE

COMMAND = re.compile(r"\\([A-Za-z]+)")
#: Conditionals and their delimiters: inside the skipped branch of our own \ifdefined they
#: would change TeX's nesting count.
CONDITIONAL = re.compile(r"^(?:if.*|fi|else|or)$")
#: Text-mode commands of LaTeX and of the paper's packages that model text uses.
_TEXT_COMMANDS = """
begin end item par label ref eqref pageref cref Cref cite citep citet textbf textit emph texttt
textsc textrm textsf textup textnormal underline noindent indent section subsection subsubsection
paragraph caption centering includegraphics linewidth textwidth setcounter text boxed hfill
vspace hspace quad qquad newline linebreak footnote ldots dots cdots unverified qedhere qed url
href ensuremath operatorname mbox hbox vbox bf it rm tt small large Large tiny footnotesize
normalsize medskip smallskip bigskip tag notag nonumber intertext displaylimits limits nolimits
"""
DEFINED_BY_THE_PREAMBLE: frozenset[str] = frozenset(
    bare
    for name in [*MATH_ONLY, *SIZED_PAIR, *TEXT_SAFE, *_TEXT_COMMANDS.split()]
    if (bare := name.lstrip("\\")).isalpha()  # a letter name: \| is no name COMMAND finds
)


def provide_undefined_commands(body: str) -> str:
    """`body` preceded by a definition, if still undefined, for each command name it uses."""
    names = sorted({name for name in COMMAND.findall(body) if not CONDITIONAL.match(name)} - DEFINED_BY_THE_PREAMBLE)
    if not names:
        return body
    provided = "".join(
        f"\\ifdefined\\{name}\\else\\def\\{name}{{\\ensuremath{{\\operatorname{{{name}}}}}}}\\fi" for name in names
    )
    return f"{provided}%\n{body}"
