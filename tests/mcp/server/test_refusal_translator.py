"""One module turns server-side refusals into MCP errors: ``mcp/server/_refusals.py`` (issue 42).

An AST scan over the package: nothing else on the server side constructs an ``MCPError`` (or a class
deriving from one), an ``ErrorData``/``JSONRPCError``, or a JSON-RPC error body (a dict literal with
``jsonrpc`` and ``error``). The host side (``mcp/host/``) and the client-side message reader in
``mcp/compat.py`` are the other direction (they read or stand in for a *server's* answer) and are
exempt by name. A control tree shows the scan failing on each kind of construction.
"""

from __future__ import annotations

import ast
from pathlib import Path

import agent_connector_sdk
from agent_connector_sdk.gateway import REFUSAL_CODES
from agent_connector_sdk.mcp.server import CODES

PACKAGE_ROOT = Path(agent_connector_sdk.__file__).parent
TRANSLATOR = "mcp/server/_refusals.py"
ERROR_TYPES = frozenset({"MCPError", "McpError", "ErrorData", "JSONRPCError"})
HOST_SIDE = ("mcp/host/",)
CLIENT_SIDE_FUNCTIONS = {"mcp/compat.py": frozenset({"install_tolerant_json_reader", "_hook_session"})}
"""Functions that build a JSON-RPC error on the *client* side (the SDK's reader, standing in for an
answer it cannot parse; the host's session hooks, failing the waiting requests when the server answers
an id this host never sent): not a server refusal."""


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _constructions(tree: ast.AST) -> list[tuple[int, str, tuple[str, ...]]]:
    """Every MCP error built in ``tree``: ``(line, what, enclosing functions)``."""
    found: list[tuple[int, str, tuple[str, ...]]] = []

    def visit(node: ast.AST, scope: tuple[str, ...]) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            scope = (*scope, node.name)
        if isinstance(node, ast.ClassDef) and any(_name(base) in ERROR_TYPES for base in node.bases):
            found.append((node.lineno, f"class {node.name} derives from an MCP error", scope))
        if isinstance(node, ast.Call):
            callee = node.func
            if _name(callee) in ERROR_TYPES:
                found.append((node.lineno, f"{_name(callee)}(...)", scope))
            elif (
                isinstance(callee, ast.Attribute)
                and callee.attr == "__init__"
                and _name(callee.value) in ERROR_TYPES
            ):
                found.append((node.lineno, f"{_name(callee.value)}.__init__(...)", scope))
        if isinstance(node, ast.Dict):
            keys = {key.value for key in node.keys if isinstance(key, ast.Constant)}
            if {"jsonrpc", "error"} <= keys:
                found.append((node.lineno, "a JSON-RPC error body", scope))
        for child in ast.iter_child_nodes(node):
            visit(child, scope)

    visit(tree, ())
    return found


def builders_outside_the_translator(root: Path) -> dict[str, list[str]]:
    """Module path (relative to ``root``) -> the MCP errors it builds, for every module that should not."""
    offenders: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if relative == TRANSLATOR or relative.startswith(HOST_SIDE):
            continue
        exempt = CLIENT_SIDE_FUNCTIONS.get(relative, frozenset())
        hits = [
            f"line {line}: {what}"
            for line, what, scope in _constructions(ast.parse(path.read_text(encoding="utf-8")))
            if not exempt.intersection(scope)
        ]
        if hits:
            offenders[relative] = hits
    return offenders


def test_only_the_translator_builds_mcp_errors_on_the_server_side() -> None:
    assert builders_outside_the_translator(PACKAGE_ROOT) == {}


def test_the_translator_is_where_they_are_built() -> None:
    tree = ast.parse((PACKAGE_ROOT / TRANSLATOR).read_text(encoding="utf-8"))
    built = {what for _, what, _ in _constructions(tree)}
    assert {
        "MCPError(...)",
        "MCPError.__init__(...)",
        "class _ResourceNotFound derives from an MCP error",
        "a JSON-RPC error body",  # the entry's answers, sent before the mcp SDK sees the request
    } <= built


def _write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_control_the_scan_finds_each_kind_of_construction(tmp_path: Path) -> None:
    _write(
        tmp_path, TRANSLATOR, "from mcp.shared.exceptions import MCPError\nMCPError(code=1, message='x')\n"
    )
    _write(tmp_path, "mcp/host/_translate.py", "import mcp_types\nmcp_types.ErrorData(code=1, message='x')\n")
    _write(
        tmp_path,
        "mcp/server/_gates.py",
        "from mcp.shared.exceptions import MCPError\n"
        "def gate():\n    raise MCPError(code=-32602, message='Invalid cursor')\n",
    )
    _write(
        tmp_path,
        "mcp/server/_entry.py",
        "def body(i):\n    return {'jsonrpc': '2.0', 'id': i, 'error': {'code': -32600, 'message': 'x'}}\n",
    )
    _write(
        tmp_path,
        "demo/lab.py",
        "import mcp.shared.exceptions as e\n"
        "class NotFound(e.MCPError):\n"
        "    def __init__(self):\n        e.MCPError.__init__(self, -32602, 'gone')\n",
    )
    _write(
        tmp_path,
        "mcp/compat.py",
        "import mcp_types\n"
        "def install_tolerant_json_reader():\n    mcp_types.ErrorData(code=-32700, message='x')\n"
        "def server_side():\n    mcp_types.JSONRPCError(jsonrpc='2.0', id=1, error=None)\n",
    )
    _write(tmp_path, "mcp/server/_fine.py", "result = {'jsonrpc': '2.0', 'id': 1, 'result': {}}\n")
    assert builders_outside_the_translator(tmp_path) == {
        "demo/lab.py": [
            "line 2: class NotFound derives from an MCP error",
            "line 4: MCPError.__init__(...)",
        ],
        "mcp/compat.py": ["line 5: JSONRPCError(...)"],
        "mcp/server/_entry.py": ["line 2: a JSON-RPC error body"],
        "mcp/server/_gates.py": ["line 3: MCPError(...)"],
    }


def test_every_code_has_one_name_and_the_gateway_keeps_its_range() -> None:
    assert len(set(CODES.values())) == len(CODES)
    assert all(-32019 <= code <= -32000 for code in REFUSAL_CODES.values())  # implementation-defined
