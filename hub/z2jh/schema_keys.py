"""Check hub/z2jh/values.yaml against the key tree of the Zero to JupyterHub chart's schema.

The chart ships ``jupyterhub/values.schema.yaml`` (JSON schema, 134 kB, BSD-3-Clause,
github.com/jupyterhub/zero-to-jupyterhub-k8s). Committed here is only its key tree,
``schema_keys.json``, made by ``extract``: for every object node, its declared keys and
whether it accepts other keys. ``unknown_keys`` then finds every key of a values file the
chart would reject (the chart's schema sets ``additionalProperties: false`` almost
everywhere, so a misspelt key fails ``helm install``).

    python hub/z2jh/schema_keys.py extract SCHEMA.yaml     # rewrite schema_keys.json
    python hub/z2jh/schema_keys.py check [values.yaml]     # exit 1 listing unknown keys
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
KEYS = HERE / "schema_keys.json"


def extract(schema: dict) -> dict:
    """``{"keys": {name: subtree}, "open": bool, "each": subtree|None}`` of a schema node."""
    node = {"keys": {}, "open": True, "each": None}
    props = schema.get("properties") or {}
    for name, sub in props.items():
        node["keys"][name] = extract(sub) if isinstance(sub, dict) else {"keys": {}, "open": True, "each": None}
    extra = schema.get("additionalProperties", True)
    if extra is False:
        node["open"] = False
    elif isinstance(extra, dict) and (extra.get("properties") or extra.get("additionalProperties") is False):
        node["open"], node["each"] = False, extract(extra)
    if schema.get("patternProperties"):     # e.g. hub.config: any traitlets class name
        node["open"] = True
    # a leaf without declared keys (strings, lists, free objects) accepts anything below it
    if not props and node["each"] is None and extra is not False:
        node["open"] = True
    return node


def unknown_keys(values: dict, tree: dict, path: str = "") -> list[str]:
    """Key paths of ``values`` that the schema tree does not allow."""
    problems = []
    if not isinstance(values, dict):
        return problems
    for key, value in values.items():
        where = f"{path}.{key}" if path else str(key)
        if key in tree["keys"]:
            problems += unknown_keys(value, tree["keys"][key], where)
        elif tree["each"] is not None:
            problems += unknown_keys(value, tree["each"], where)
        elif not tree["open"]:
            problems.append(where)
    return problems


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["extract"] and len(argv) == 2:
        schema = yaml.safe_load(Path(argv[1]).read_text(encoding="utf-8"))
        tree = extract(schema)
        tree["_source"] = ("key tree of jupyterhub/values.schema.yaml, zero-to-jupyterhub-k8s "
                           "(BSD-3-Clause, Copyright (c) Project Jupyter Contributors), made by "
                           "hub/z2jh/schema_keys.py extract")
        KEYS.write_text(json.dumps(tree, separators=(",", ":"), sort_keys=True) + "\n", encoding="utf-8")
        return 0
    if argv[:1] == ["check"]:
        values_path = Path(argv[1]) if len(argv) > 1 else HERE / "values.yaml"
        problems = unknown_keys(yaml.safe_load(values_path.read_text(encoding="utf-8")),
                                json.loads(KEYS.read_text(encoding="utf-8")))
        for problem in problems:
            print(f"unknown key: {problem}")
        return 1 if problems else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
