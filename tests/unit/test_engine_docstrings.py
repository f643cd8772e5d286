"""The pure engine documents its model (DESIGN.md, "Models to learn from": pvlib's docstrings).

Every public function, method, property and class of `trncost.estimate` says what it computes,
names each of its parameters, and gives the unit of every number it takes or returns in square
brackets, pvlib-style (`[s]`, `[USD/instance-hour]`, `[target units/s]`, `[unitless]`); the
functions that carry the cost model name their sources in a References section; and the
formulas the engine writes into an estimate's input table are the ones its docstrings state.

The modules are read as source (ast): the test checks what a reader of the code sees.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import trncost

ENGINE = Path(trncost.__file__).parent / "estimate"

# Being removed from the engine by another change (issue 21): not documented here.

# An annotation that carries a number with a unit (bool does not).
NUMERIC = re.compile(
    r"\b(float|int|Decimal|Array|FloatArray|NDArray|Quantity|Number|Measured|MaybeMeasured)\b"
)

# The words a unit in square brackets may be made of ("[unit of the price]", "[as stated]":
# the unit another argument or the input row names).
UNIT_WORDS = set(
    "USD s h days month months GB instance-hour instance-hours instances accelerator-hour "
    "accelerator-hours interruptions tokens FLOP target targets units unit trials doublings "
    "draws replicates unitless per of the row figure price as stated".split()
)
UNIT = re.compile(r"\[([^\[\]]+)\]")

# The functions that carry the cost model: each names where its formula comes from.
MODEL = {
    "timing.time_to_target",
    "engine.estimate",
    "engine.break_even_price",
    "costs.instances",
    "costs.storage",
    "costs.data_transfer",
    "costs.logs",
    "costs.data_preparation",
    "costs.adaptation_reruns",
    "money.tiered_amount",
    "money.ec2_billed_seconds",
    "money.sagemaker_billed_seconds",
    "evidence.Evidence.throughput",
    "readings.TrialReadings.failure_rate",
    "admission.admit",
    "scaling.fit_scaling",
    "scaling.noise_per_count",
    "scaling.discrepancy",
    "scaling.bootstrap",
    "scaling_prior.exponent_prior",
    "failure_prior.prior_for",
    "failure_prior.posterior",
    "draws.gamma_quantile",
    "uncertainty.monte_carlo",
    "sensitivity.tornado",
    "mfu.mfu_check",
    "credits.credits_runway",
    "credits.days_from_civil",
    "compare.comparability",
    "compare.rank",
    "decide.decide",
    "next_trial.next_trial",
}

SECTION = re.compile(r"^([A-Z][A-Za-z ]+)\n-{3,}$", re.MULTILINE)


@dataclass(frozen=True)
class Documented:
    name: str  # module.function or module.Class.method
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    doc: str
    is_property: bool = False

    @property
    def is_method(self) -> bool:
        return self.name.count(".") == 2


def _modules() -> list[Path]:
    return sorted(p for p in ENGINE.glob("*.py"))


def _public(name: str) -> bool:
    return not name.startswith("_")


def _is_property(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    names = {
        d.id if isinstance(d, ast.Name) else getattr(d, "attr", "") for d in node.decorator_list
    }
    return bool(names & {"property", "cached_property"})


def _documented() -> Iterator[Documented]:
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        mod = path.stem
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _public(node.name):
                yield Documented(f"{mod}.{node.name}", node, ast.get_docstring(node) or "")
            elif isinstance(node, ast.ClassDef) and _public(node.name):
                yield Documented(f"{mod}.{node.name}", node, ast.get_docstring(node) or "")
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and _public(
                        item.name
                    ):
                        yield Documented(
                            f"{mod}.{node.name}.{item.name}",
                            item,
                            ast.get_docstring(item) or "",
                            _is_property(item),
                        )


DOCUMENTED = list(_documented())


def _sections(doc: str) -> dict[str, str]:
    """Numpy-style sections: title → body (the summary and extended text under '')."""
    out: dict[str, str] = {}
    marks = list(SECTION.finditer(doc))
    out[""] = doc[: marks[0].start()] if marks else doc
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(doc)
        out[m.group(1).strip()] = doc[m.end() : end]
    return out


def _entries(section: str) -> dict[str, str]:
    """A Parameters/Attributes section's entries: each name (`a, b : type` names two) → its
    text (the entry line and its indented description)."""
    out: dict[str, str] = {}
    current: list[str] = []
    for line in section.strip("\n").splitlines():
        if line and not line[0].isspace():
            head = line.split(":", 1)[0]
            current = [n.strip().lstrip("*") for n in head.split(",") if n.strip()]
            for n in current:
                out[n] = line
        else:
            for n in current:
                out[n] += "\n" + line
    return out


def _units(text: str) -> list[str]:
    return [u for u in UNIT.findall(text) if _is_unit(u)]


def _is_unit(text: str) -> bool:
    """`USD/instance-hour`, `target units/s`, `1/instance-hour`: unit words, numbers and
    operators only (never a formula's index such as `P[key]`)."""
    words = [w for w in re.split(r"[\s/·×()^²,]+", text) if w and not w.isdigit()]
    return bool(words) and all(w in UNIT_WORDS for w in words)


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    a = node.args
    params = [*a.posonlyargs, *a.args, *a.kwonlyargs]
    if a.vararg:
        params.append(a.vararg)
    if a.kwarg:
        params.append(a.kwarg)
    return [p for p in params if p.arg not in ("self", "cls")]


def _annotation(node: ast.expr | None) -> str:
    """The annotation as written; a callable's is left out (its unit is what it returns)."""
    text = ast.unparse(node) if node is not None else ""
    return "" if text.startswith("Callable") else text


def _init(cls: ast.ClassDef) -> ast.FunctionDef | None:
    return next(
        (n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None
    )


# -- the tests ---------------------------------------------------------------------------------
def test_the_engine_has_public_functions_to_document() -> None:
    # Given the engine's modules read as source
    names = {d.name for d in DOCUMENTED}
    # Then the model's functions are among them (the test reads the modules it means to)
    assert len(DOCUMENTED) > 100
    assert MODEL <= names, sorted(MODEL - names)


def test_every_engine_module_says_what_it_holds() -> None:
    # Given every module of the engine
    for path in _modules():
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        # Then it opens with a docstring that says what it is for
        assert len(doc.split()) >= 8, f"estimate/{path.name}: no module docstring"


@pytest.mark.parametrize("item", DOCUMENTED, ids=lambda d: d.name)
def test_every_public_function_is_documented(item: Documented) -> None:
    # Given a public function, method, property or class of the engine
    # Then its docstring says something (a sentence, not a word)
    assert len(item.doc.split()) >= 4, f"{item.name}: no docstring"


@pytest.mark.parametrize(
    "item",
    [d for d in DOCUMENTED if not isinstance(d.node, ast.ClassDef) and not d.is_property],
    ids=lambda d: d.name,
)
def test_every_parameter_is_named_and_every_number_has_its_unit(item: Documented) -> None:
    node = item.node
    assert not isinstance(node, ast.ClassDef)
    sections = _sections(item.doc)
    entries = _entries(sections.get("Parameters", ""))
    # Given each parameter of a public function
    for p in _parameters(node):
        annotation = _annotation(p.annotation)
        if NUMERIC.search(annotation):
            # Then a number has its unit in brackets: in its Parameters entry, or beside its
            # name in the text
            beside = [line for line in item.doc.splitlines() if f"`{p.arg}` [" in line]
            stated = entries.get(p.arg, "") + "\n".join(beside)
            assert _units(stated), f"{item.name}: parameter {p.arg} ({annotation}) has no [unit]"
        else:
            # Then anything else is at least named (an entry, or `name` in the text)
            assert p.arg in entries or f"`{p.arg}`" in item.doc, (
                f"{item.name}: parameter {p.arg} not named in its docstring"
            )
    # And the docstring lists no parameter the function does not take
    taken = {p.arg for p in _parameters(node)}
    assert set(entries) <= taken, f"{item.name}: documents {sorted(set(entries) - taken)}"


def _returns(item: Documented) -> str:
    node = item.node
    return "" if isinstance(node, ast.ClassDef) else _annotation(node.returns)


@pytest.mark.parametrize(
    "item",
    [d for d in DOCUMENTED if _returns(d) not in ("", "None", "NoReturn")],
    ids=lambda d: d.name,
)
def test_what_comes_back_is_stated_with_its_unit(item: Documented) -> None:
    returns = _returns(item)
    sections = _sections(item.doc)
    if item.is_property or (item.is_method and "Returns" not in sections):
        # Given a property, or a method documented in a paragraph: its text says what it gives
        stated = sections[""]
    else:
        # Given a function that returns something: a Returns section says what
        assert "Returns" in sections, f"{item.name}: no Returns section"
        stated = sections["Returns"]
        assert stated.strip(), f"{item.name}: an empty Returns section"
    # Then a number comes back with its unit in brackets
    if NUMERIC.search(returns):
        assert _units(stated), f"{item.name} returns {returns}: no [unit] stated"


@pytest.mark.parametrize(
    "item",
    [d for d in DOCUMENTED if isinstance(d.node, ast.ClassDef) and _init(d.node) is not None],
    ids=lambda d: d.name,
)
def test_a_class_names_what_it_is_built_from(item: Documented) -> None:
    node = item.node
    assert isinstance(node, ast.ClassDef)
    init = _init(node)
    assert init is not None
    # Given a public class with its own constructor
    entries = _entries(_sections(item.doc).get("Parameters", ""))
    # Then its docstring lists the constructor's parameters, numbers with their units
    for p in _parameters(init):
        assert p.arg in entries, f"{item.name}: constructor parameter {p.arg} not listed"
        if NUMERIC.search(_annotation(p.annotation)):
            assert _units(entries[p.arg]), f"{item.name}: parameter {p.arg} has no [unit]"


@pytest.mark.parametrize("name", sorted(MODEL))
def test_the_cost_model_names_its_sources(name: str) -> None:
    item = next(d for d in DOCUMENTED if d.name == name)
    # Given a function that carries the cost model
    refs = _sections(item.doc).get("References", "")
    # Then it names its sources: DESIGN.md, the seed checklist, a paper, a data file or a page
    assert len(refs.split()) >= 3, f"{name}: no References section"
    assert re.search(
        r"DESIGN\.md|seeds/|https?://|\(\d{4}\)|\b(19|20)\d\d\b|data/\w+\.json", refs
    ), f"{name}: its References name no source"


def _formulas(tree: ast.AST) -> Iterator[tuple[ast.FunctionDef, str]]:
    """(enclosing top-level function or method, formula) for every constant formula the
    engine writes into an input table: `ledger.derived(..., formula, inputs)`, a charge's or a
    Derived's `formula=`, and the metric of a trial `measurement(trials, metric)`."""

    def calls(fn: ast.FunctionDef) -> Iterator[str]:
        for node in ast.walk(fn):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            args: list[ast.expr] = []
            if name == "derived" and len(node.args) >= 5:
                args.append(node.args[4])
            if name == "measurement" and len(node.args) >= 2:
                args.append(node.args[1])
            args += [k.value for k in node.keywords if k.arg == "formula"]
            for a in args:
                if isinstance(a, ast.Constant) and isinstance(a.value, str):
                    yield a.value

    for top in ast.iter_child_nodes(tree):
        fns = [top] if isinstance(top, ast.FunctionDef) else []
        if isinstance(top, ast.ClassDef):
            fns = [n for n in top.body if isinstance(n, ast.FunctionDef)]
        for fn in fns:
            for formula in calls(fn):
                yield fn, formula


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_the_docstrings_state_the_formulas_the_engine_writes() -> None:
    checked = 0
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        every_doc = _flat(
            " ".join(
                ast.get_docstring(n) or ""
                for n in ast.walk(tree)
                if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef))
            )
        )
        # Given each formula the engine writes into an input table
        for fn, formula in _formulas(tree):
            checked += 1
            own = _flat(ast.get_docstring(fn) or "")
            # Then a public function's docstring states it (a private helper's: its module's)
            where = own if _public(fn.name) else every_doc
            assert _flat(formula) in where, (
                f"estimate/{path.name}: {fn.name} writes the formula {formula!r}, "
                "which its docstring does not state"
            )
    assert checked >= 30
