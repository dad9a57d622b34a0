"""The error tree drawn in ``agent_connector_sdk.errors``'s docstring is the code's.

Each line of the drawing names a class, where it is raised (gate, ``gate/step`` or step) and the module
that defines it; its indentation names its parent. The drawing is read into rows and compared with rows
built from the classes themselves, so a class added without its line, moved to another module,
re-parented, given another gate or a second base fails here. The control cases bend the drawing and the
class list and see each bend reported.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from dataclasses import dataclass, replace

import agent_connector_sdk
from agent_connector_sdk import errors
from agent_connector_sdk.errors import AgentConnectorError

_PACKAGE = "agent_connector_sdk."
# "    │   ├── PinFileError                 discover         core.contracts._source_pins +ValueError"
_LINE = re.compile(
    r"^    (?P<branch>(?:[│ ]   )*(?:[├└]── )?)(?P<name>\w+) +(?P<where>\S+) +(?P<module>[\w.]+)"
    r"(?P<extras>(?: \+\w+)*)$"
)


@dataclass(frozen=True)
class Row:
    """One class as the drawing shows it: its parent, where it is raised, its module, other bases."""

    name: str
    parent: str | None
    where: str
    module: str
    extras: tuple[str, ...]

    def line(self) -> str:
        extras = "".join(f" +{name}" for name in self.extras)
        return f"{self.name} (under {self.parent}) {self.where} {self.module}{extras}"


def _all_subclasses(cls: type[BaseException]) -> set[type[BaseException]]:
    found: set[type[BaseException]] = set()
    for sub in cls.__subclasses__():
        found |= {sub, *_all_subclasses(sub)}
    return found


def _package_classes() -> list[type[AgentConnectorError]]:
    for module in pkgutil.walk_packages(agent_connector_sdk.__path__, _PACKAGE):
        if not module.name.endswith("__main__"):  # the CLI entry module runs the CLI on import
            importlib.import_module(module.name)
    found = [
        cls
        for cls in _all_subclasses(AgentConnectorError)
        if cls.__module__.startswith(_PACKAGE) and not cls.__name__.startswith("_")
    ]
    return [AgentConnectorError, *sorted(found, key=lambda cls: cls.__name__)]  # type: ignore[list-item]


def code_rows(classes: list[type[AgentConnectorError]]) -> dict[str, Row]:
    rows: dict[str, Row] = {}
    for cls in classes:
        ours = [base for base in cls.__bases__ if issubclass(base, AgentConnectorError)]
        others = tuple(
            base.__name__
            for base in cls.__bases__
            if ours and not issubclass(base, AgentConnectorError)  # the root's own base is Exception
        )
        if cls.gate is not None and cls.step is not None and cls.gate != cls.step:
            where = f"{cls.gate}/{cls.step}"
        else:
            where = cls.gate or cls.step or "—"
        rows[cls.__name__] = Row(
            name=cls.__name__,
            parent=ours[0].__name__ if ours else None,
            where=where,
            module=cls.__module__.removeprefix(_PACKAGE),
            extras=others,
        )
    return rows


def drawn_rows(doc: str) -> dict[str, Row]:
    rows: dict[str, Row] = {}
    ancestors: list[str] = []
    for text in doc.splitlines():
        match = _LINE.match(text)
        if match is None:
            continue
        depth = len(match["branch"]) // 4
        del ancestors[depth:]
        name = match["name"]
        assert name not in rows, f"{name} is drawn twice"
        rows[name] = Row(
            name=name,
            parent=ancestors[-1] if ancestors else None,
            where=match["where"],
            module=match["module"],
            extras=tuple(re.findall(r"\+(\w+)", match["extras"])),
        )
        ancestors.append(name)
    return rows


def disagreements(drawn: dict[str, Row], code: dict[str, Row]) -> list[str]:
    """Each way the drawing and the code differ, one sentence each (empty: the drawing is true)."""
    found = [f"not drawn: {code[name].line()}" for name in sorted(code.keys() - drawn.keys())]
    found += [
        f"drawn but not in the code: {drawn[name].line()}" for name in sorted(drawn.keys() - code.keys())
    ]
    found += [
        f"drawn as {drawn[name].line()}, the code has {code[name].line()}"
        for name in sorted(drawn.keys() & code.keys())
        if drawn[name] != code[name]
    ]
    return found


def test_the_drawing_is_the_code() -> None:
    drawn = drawn_rows(errors.__doc__ or "")
    assert len(drawn) > 40  # the drawing was read, not skipped
    assert disagreements(drawn, code_rows(_package_classes())) == []


def test_every_error_class_is_drawn_in_the_root_docstring() -> None:
    doc = errors.__doc__ or ""
    missing = sorted(cls.__name__ for cls in _package_classes() if cls.__name__ not in doc)
    assert missing == []


class _UndrawnError(AgentConnectorError):
    """A family the drawing does not know (for the control case only: its module is this test's)."""


def test_control_each_bend_of_the_drawing_or_the_code_is_reported() -> None:
    doc = errors.__doc__ or ""
    code = code_rows(_package_classes())
    assert disagreements(drawn_rows(doc), code) == []
    # A class added to the code without its line.
    added = code_rows([*_package_classes(), _UndrawnError])
    assert disagreements(drawn_rows(doc), added) == [f"not drawn: {added['_UndrawnError'].line()}"]
    # A class moved to another module.
    moved = {**code, "GatewayError": replace(code["GatewayError"], module="gateway.errors")}
    assert [line.split(",")[0] for line in disagreements(drawn_rows(doc), moved)] == [
        f"drawn as {code['GatewayError'].line()}"
    ]
    # A line dropped from the drawing, and a class re-parented in it.
    dropped = "\n".join(line for line in doc.splitlines() if "── CliError " not in line)
    assert disagreements(drawn_rows(dropped), code) == [f"not drawn: {code['CliError'].line()}"]
    reparented = doc.replace("│   └── ServerUnavailable", "└── ServerUnavailable   ")
    assert disagreements(drawn_rows(reparented), code) != []
    # A gate changed in the drawing.
    regated = doc.replace(
        "├── AdmissionError               admit  ", "├── AdmissionError               invoke "
    )
    assert regated != doc
    assert [line.split(",")[0] for line in disagreements(drawn_rows(regated), code)] == [
        f"drawn as {replace(code['AdmissionError'], where='invoke').line()}"
    ]
