"""Commands a model uses without defining them (\\Tr, \\poly, \\QED) made printable.

One undefined command stops pdflatex. For each command name the body uses, a line before the
body defines it only if TeX does not know it (`\\ifdefined`, which, unlike `\\providecommand`,
leaves commands equal to `\\relax`, such as `\\protect`, alone). Every real command is kept as
it is, and an invented one prints its own name as an upright operator instead of failing. This
runs before the one compile: it is not a rescue after a failed one.
"""

from __future__ import annotations

import re

COMMAND = re.compile(r"\\([A-Za-z]+)")
#: Conditionals and their delimiters: inside the skipped branch of our own \ifdefined they
#: would change TeX's nesting count.
CONDITIONAL = re.compile(r"^(?:if.*|fi|else|or)$")


def provide_undefined_commands(body: str) -> str:
    """`body` preceded by a definition, if still undefined, for each command name it uses."""
    names = sorted({name for name in COMMAND.findall(body) if not CONDITIONAL.match(name)})
    if not names:
        return body
    provided = "".join(
        f"\\ifdefined\\{name}\\else\\def\\{name}{{\\ensuremath{{\\operatorname{{{name}}}}}}}\\fi" for name in names
    )
    return f"{provided}%\n{body}"
