"""Commands a model uses without defining them are made printable before the one compile."""

from __future__ import annotations

from lemmata.latex.undefined import provide_undefined_commands


def test_each_used_command_is_defined_only_if_tex_does_not_know_it() -> None:
    out = provide_undefined_commands("Trace $\\Tr(A)$ and $\\alpha$; \\Tr again.")
    first_line, body = out.split("%\n", 1)
    assert body == "Trace $\\Tr(A)$ and $\\alpha$; \\Tr again."
    assert first_line == (
        "\\ifdefined\\Tr\\else\\def\\Tr{\\ensuremath{\\operatorname{Tr}}}\\fi"
        "\\ifdefined\\alpha\\else\\def\\alpha{\\ensuremath{\\operatorname{alpha}}}\\fi"
    )


def test_conditionals_are_left_out_of_our_own_conditional() -> None:
    out = provide_undefined_commands("\\ifx a b \\else c \\fi \\iftrue \\or \\Tr")
    assert out.split("%\n", 1)[0] == "\\ifdefined\\Tr\\else\\def\\Tr{\\ensuremath{\\operatorname{Tr}}}\\fi"


def test_a_body_without_commands_is_unchanged() -> None:
    assert provide_undefined_commands("Plain text, 50\\% done.") == "Plain text, 50\\% done."
