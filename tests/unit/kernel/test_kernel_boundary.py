"""The kernel's boundary, checked on the source: lemmata/kernel imports nothing of lemmata but
itself (and only the standard library and Z3 besides), only it issues the certificates a proof
counts by, and nothing outside it says a statement is machine-checked. Each rule is tried on a
planted violation too, so a rule that cannot fail is seen to fail here."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import lemmata

PACKAGE = Path(lemmata.__file__).resolve().parent
KERNEL = PACKAGE / "kernel"
#: Third-party modules the kernel may use: the solver it translates to.
KERNEL_THIRD_PARTY = {"z3"}
#: What only the kernel may name: the functions that issue certificates and their prefix.
ISSUERS = {"coq_certificate", "solver_certificate", "KERNEL_VERSION", "CERTIFICATE_PREFIX"}


def outside_the_kernel() -> list[Path]:
    return [path for path in PACKAGE.rglob("*.py") if KERNEL not in path.parents]


def foreign_imports(source: str) -> list[str]:
    """Modules a kernel file imports that are neither the standard library, Z3, nor the kernel."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""] if node.level == 0 else ["lemmata.kernel"]
        for name in names:
            top = name.split(".")[0]
            if name == "lemmata.kernel" or name.startswith("lemmata.kernel."):
                continue
            if top in sys.stdlib_module_names or top in KERNEL_THIRD_PARTY:
                continue
            found.append(name)
    return found


def test_the_kernel_imports_only_itself_the_standard_library_and_z3() -> None:
    offending = {path.name: foreign_imports(path.read_text(encoding="utf-8")) for path in KERNEL.glob("*.py")}
    assert not {name: found for name, found in offending.items() if found}


def test_the_import_rule_sees_an_import_of_the_rest_of_lemmata() -> None:
    assert foreign_imports("from lemmata.artifacts import FormalCheck\nimport json\nimport z3\n") == [
        "lemmata.artifacts"
    ]
    assert foreign_imports("from lemmata.kernel.tree import Op\nfrom . import tree\n") == []
    assert foreign_imports("import pydantic\n") == ["pydantic"]


def certificate_issuing(source: str) -> list[str]:
    """Where code outside the kernel names what issues certificates, or spells one."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name | ast.Attribute):
            name = node.id if isinstance(node, ast.Name) else node.attr
            if name in ISSUERS:
                found.append(name)
        elif isinstance(node, ast.ImportFrom) and node.module == "lemmata.kernel.certificate":
            found.append("import of lemmata.kernel.certificate")
        elif isinstance(node, ast.alias) and node.name in ISSUERS:
            found.append(node.name)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "lemmata-kernel-" in node.value:
            found.append(node.value)
    return found


def test_only_the_kernel_issues_certificates() -> None:
    offending = {
        str(path.relative_to(PACKAGE)): certificate_issuing(path.read_text(encoding="utf-8"))
        for path in outside_the_kernel()
    }
    assert not {name: found for name, found in offending.items() if found}


def test_the_certificate_rule_sees_an_issue_outside_the_kernel() -> None:
    planted = (
        "from lemmata.kernel.certificate import solver_certificate\n"
        "check = MachineCheck(outcome='proved', certificate=solver_certificate(text))\n"
        "forged = 'lemmata-kernel-2:' + digest\n"
    )
    assert sorted(certificate_issuing(planted)) == [
        "import of lemmata.kernel.certificate",
        "lemmata-kernel-2:",
        "solver_certificate",
        "solver_certificate",
    ]


def says_machine_checked(source: str) -> list[int]:
    """Lines where code gives `machine_checked` as a value (an argument, a return value, an
    assignment), not where it compares with it, looks it up or names it in a schema."""
    found = []
    for node in ast.walk(ast.parse(source)):
        value = None
        if isinstance(node, ast.keyword | ast.Return | ast.Assign | ast.AnnAssign | ast.NamedExpr):
            value = node.value
        if isinstance(value, ast.Constant) and value.value == "machine_checked":
            found.append(node.lineno if hasattr(node, "lineno") else value.lineno)
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            proved = any(
                kw.arg == "outcome" and isinstance(kw.value, ast.Constant) and kw.value.value == "proved"
                for kw in node.keywords
            )
            certified = any(
                kw.arg == "certificate" and isinstance(kw.value, ast.Attribute) and kw.value.attr == "certificate"
                for kw in node.keywords
            )
            if name == "MachineCheck" and proved and not certified:
                found.append(node.lineno)
    return sorted(found)


def test_nothing_outside_the_kernel_says_machine_checked_or_proved_without_its_certificate() -> None:
    """A proof counts by its certificate (kernel/verdict.py), and a status is derived by the
    kernel's rule: code outside it may pass on a certificate the kernel issued, never make one up."""
    offending = {
        str(path.relative_to(PACKAGE)): says_machine_checked(path.read_text(encoding="utf-8"))
        for path in outside_the_kernel()
    }
    assert not {name: lines for name, lines in offending.items() if lines}


def test_the_verdict_rule_sees_a_status_set_and_a_proof_without_certificate() -> None:
    planted = (
        "lemma = ProvedLemma(status='machine_checked')\n"
        "if lemma.status == 'machine_checked':\n"
        "    pass\n"
        "LABELS = {'machine_checked': 'machine-checked'}\n"
        "def verdict():\n"
        "    return 'machine_checked'\n"
        "MachineCheck(checker='z3', method='solver', outcome='proved')\n"
        "MachineCheck(checker='z3', method='solver', outcome='proved', certificate=answer.certificate)\n"
    )
    assert says_machine_checked(planted) == [1, 6, 7]
