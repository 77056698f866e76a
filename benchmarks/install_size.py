"""What each provider route adds to an install of convoscope, measured on disk.

For each route: a fresh virtual environment with convoscope's base dependencies (from
pyproject.toml), then the route's packages; the route's weight is the growth of site-packages,
and the largest packages it brought are listed. Routes:

* ``litellm``: the ``providers`` extra (LiteLLM and what it pulls in);
* ``anthropic-sdk``: Anthropic's SDK, for comparison with the native route;
* ``native``: convoscope's own ``anthropic:`` and ``openai:`` backends over httpx, a base
  dependency: nothing to add.

Usage: python benchmarks/install_size.py [--out benchmarks/results/install_size.md]
(needs PyPI access; pip's cache makes a second run fast).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).parents[1]
ROUTES = {
    "litellm": None,  # read from the providers extra
    "anthropic-sdk": ["anthropic"],
    "native": [],
}


def base_requirements() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return list(project["dependencies"])


def route_requirements(route: str) -> list[str]:
    if route == "litellm":
        project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
        return list(project["optional-dependencies"]["providers"])
    return list(ROUTES[route] or [])


def site_packages(venv: Path) -> Path:
    return next((venv / "lib").glob("python3*/site-packages"))


def sizes(folder: Path) -> dict[str, int]:
    """Bytes per top-level entry of site-packages."""
    totals: dict[str, int] = {}
    for entry in folder.iterdir():
        files = [entry] if entry.is_file() else [path for path in entry.rglob("*") if path.is_file()]
        totals[entry.name] = sum(path.stat().st_size for path in files)
    return totals


def measure(route: str, work: Path) -> tuple[int, list[tuple[str, int]]]:
    venv = work / route
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, *base_requirements()], check=True)
    before = sizes(site_packages(venv))
    if route_requirements(route):
        subprocess.run([*pip, *route_requirements(route)], check=True)
    after = sizes(site_packages(venv))
    grown = {name: size - before.get(name, 0) for name, size in after.items() if size != before.get(name, 0)}
    largest = sorted(((name, size) for name, size in grown.items() if not name.endswith(".dist-info")),
                     key=lambda pair: -pair[1])[:8]
    return sum(grown.values()), largest


def report(results: dict[str, tuple[int, list[tuple[str, int]]]]) -> str:
    lines = ["# What each provider route adds to an install", "",
             "Growth of site-packages over convoscope's base dependencies, measured by",
             "`python benchmarks/install_size.py` (fresh virtual environments, Python "
             f"{sys.version_info.major}.{sys.version_info.minor}, Linux x86-64).", "",
             "| route | adds | largest packages it brings |", "|---|---:|---|"]
    for route, (total, largest) in results.items():
        top = ", ".join(f"{name} {size / 1e6:.0f} MB" for name, size in largest[:6] if size >= 1e6) or "—"
        lines.append(f"| {route} | {total / 1e6:.0f} MB | {top} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="convoscope-size-") as folder:
        results = {route: measure(route, Path(folder)) for route in ROUTES}
    text = report(results)
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
