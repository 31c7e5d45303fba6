"""The recorded results of the training grids' cells: one line of text per cell, committed in
``records/cells/GRID.jsonl``, read to check the cache and rerun to check the record.

Contract: a line is JSON: the cell's ``key`` (`engine.experiments.grid.cell_keys`), its
``repr`` and its ``result``, each array with its dtype, shape and values (exact: a float's
``repr`` reads back to the same bits), or for an array of more than ``INLINE`` values (a
model's weights) the sha256 of its bytes. ``check`` raises when a result differs from the
line recorded for its key, naming the file, line and array. ``GRIDS`` names each grid's
train function, so `rerun` can train any recorded cell again from its line alone (the
cell is rebuilt from its ``repr``, whose only calls may be the train module's classes).
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from engine.code_key import ROOT
from engine.errors import EngineError
from tracefile.files import write_atomic

#: Where the committed grid records are.
CELLS = ROOT / "records" / "cells"
#: Arrays up to this many values are written out; longer ones as their sha256.
INLINE = 64
#: Each grid's label and the function that trains one of its cells ("module:name"; a name
#: ending in "()" is a factory of the function).
GRIDS = {
    "gradient-flow grid": "engine.experiments.gradient_flow.cells:train_cell",
    "gradient-flow clipping": "engine.experiments.gradient_flow.cells:train_cell",
    "residual-stream grid": "engine.experiments.residual_stream.cells:lab_train()",
    "residual-stream long runs": "engine.experiments.residual_stream.cells:lab_train()",
}


@dataclass(frozen=True)
class Recorded:
    """One recorded cell: where it is, its key, its cell's repr and its result's text."""

    path: Path
    line: int
    key: str
    cell: str
    result: str

    @property
    def where(self) -> str:
        shown = self.path.relative_to(ROOT) if self.path.is_relative_to(ROOT) else self.path
        return f"{shown.as_posix()}:{self.line}"


def file_of(label: str, folder: Path | None = None) -> Path:
    return (folder or CELLS) / f"{'-'.join(label.split())}.jsonl"


def encode(result: Mapping[str, Any]) -> dict[str, Any]:
    """A result as JSON-ready values (see the module doc)."""
    found = {}
    for name, value in sorted(result.items()):
        array = np.asarray(value)
        entry: dict[str, Any] = {"dtype": array.dtype.str, "shape": list(array.shape)}
        if array.size > INLINE:
            entry["sha256"] = hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()
        else:
            entry["values"] = array.ravel().tolist()
        found[name] = entry
    return found


def result_text(result: Mapping[str, Any]) -> str:
    return json.dumps(encode(result), sort_keys=True)


def read(label: str, folder: Path | None = None) -> dict[str, Recorded]:
    """The recorded cells of grid ``label`` by key (none when it has no record)."""
    path = file_of(label, folder)
    if not path.is_file():
        return {}
    found = {}
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            line = json.loads(text)
            found[line["key"]] = Recorded(path, number, line["key"], line["cell"],
                                          json.dumps(line["result"], sort_keys=True))
        except (ValueError, KeyError, TypeError) as error:
            raise EngineError(f"{path}:{number}: not a cell record ({error})") from None
    return found


def check(label: str, recorded: Mapping[str, Recorded], key: str, cell: object,
          result: Mapping[str, Any]) -> None:
    """Raise when ``result`` differs from the line recorded for ``key`` (if there is one)."""
    line = recorded.get(key)
    if line is None or line.result == result_text(result):
        return
    want, got = json.loads(line.result), encode(result)
    name = next((n for n in sorted(set(want) | set(got)) if want.get(n) != got.get(n)), "?")
    raise EngineError(f"{line.where}: grid {label}: cell {cell!r} gives {name} = "
                      f"{_short(got.get(name))}, its record says {_short(want.get(name))}")


def _short(entry: Any) -> str:
    text = json.dumps(entry)
    return text if len(text) <= 160 else text[:157] + "..."


def write(folder: Path, label: str, cells: Sequence[object], keys: Sequence[str],
          results: Sequence[Mapping[str, Any]]) -> None:
    """Grid ``label``'s record, one line per cell in the grid's order."""
    lines = [json.dumps({"key": key, "cell": repr(cell), "result": encode(result)},
                        sort_keys=True) for cell, key, result in zip(cells, keys, results,
                                                                     strict=True)]
    folder.mkdir(parents=True, exist_ok=True)
    write_atomic(file_of(label, folder), "".join(f"{line}\n" for line in lines))


def trainer(label: str) -> Callable[[Any], Mapping[str, np.ndarray]]:
    """The function that trains a cell of grid ``label``."""
    module, _, name = GRIDS[label].partition(":")
    found = getattr(importlib.import_module(module), name.removesuffix("()"))
    return found() if name.endswith("()") else found


def rebuild(text: str, module: str) -> object:
    """The cell a record's ``repr`` names, built from the classes of ``module`` only."""
    namespace = vars(importlib.import_module(module))

    def value(node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Tuple):
            return tuple(value(item) for item in node.elts)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -value(node.operand)
        if isinstance(node, ast.Name) and node.id in ("inf", "nan"):
            return float(node.id)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args
                and isinstance(namespace.get(node.func.id), type)):
            return namespace[node.func.id](**{k.arg: value(k.value) for k in node.keywords})
        raise EngineError(f"a cell record names {ast.unparse(node)[:80]!r}, which is not a "
                          f"cell of {module}")

    try:
        return value(ast.parse(text, mode="eval").body)
    except (SyntaxError, TypeError, RecursionError) as error:
        raise EngineError(f"a cell record's cell {text[:80]!r} cannot be rebuilt: "
                          f"{error}") from None
