"""The import graph of the ``refbpe`` package, read from the source (nothing is imported).

    python tests/import_graph.py          # one line per module: what it imports of refbpe
    python tests/import_graph.py --dot    # the same as a Graphviz digraph

Every ``import``/``from`` statement counts, at any depth (a function-level
import is still an edge).  ``tests/test_architecture.py`` holds the graph to
its rules: no cycle, and no library module imports the command line.
"""

import ast
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "refbpe")


def module_name(path):
    rel = os.path.relpath(path, os.path.dirname(ROOT))[: -len(".py")].split(os.sep)
    if rel[-1] == "__init__":
        rel = rel[:-1]
    return ".".join(rel)


def modules():
    """{module name: path} for every ``.py`` file of the package."""
    out = {}
    for d, _, files in os.walk(ROOT):
        for f in files:
            if f.endswith(".py"):
                out[module_name(os.path.join(d, f))] = os.path.join(d, f)
    return out


def _resolve(current, is_package, node, known):
    """The refbpe modules an import node names."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "refbpe"]
    base = current if is_package else current.rsplit(".", 1)[0]
    for _ in range(node.level - 1):
        base = base.rsplit(".", 1)[0]
    target = (base + "." + node.module if node.module else base) if node.level else node.module
    if not target or target.split(".")[0] != "refbpe":
        return []
    found = []
    for alias in node.names:
        sub = target + "." + alias.name
        found.append(sub if sub in known else target)  # ``from . import x`` names module x
    return found


def import_graph():
    """{module: sorted set of refbpe modules it imports}."""
    known = modules()
    graph = {}
    for name, path in sorted(known.items()):
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        edges = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                edges.update(_resolve(name, path.endswith("__init__.py"), node, known))
        edges.discard(name)
        graph[name] = sorted(e for e in edges if e in known)
    return graph


def find_cycle(graph):
    """One import cycle as a list of modules, or None."""
    state = {}

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for nxt in graph.get(node, ()):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state:
                cycle = visit(nxt, stack)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node, [])
            if cycle:
                return cycle
    return None


def main(argv):
    graph = import_graph()
    if "--dot" in argv:
        print("digraph refbpe {")
        for m, edges in graph.items():
            for e in edges:
                print('  "%s" -> "%s";' % (m, e))
        print("}")
    else:
        width = max(len(m) for m in graph)
        for m, edges in graph.items():
            print("%-*s -> %s" % (width, m, ", ".join(e.replace("refbpe.", "") for e in edges) or "-"))
    cycle = find_cycle(graph)
    print("cycle: " + " -> ".join(cycle) if cycle else "no import cycle", file=sys.stderr)
    return 1 if cycle else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
