"""Writes src/convoscope/filters/data/keyboard_rows.json: the three letter rows (first level) of
the default layout of every keyboard the system's XKB data knows (Debian's ``xkb-data``,
/usr/share/X11/xkb/symbols), keysyms turned into characters with X11's keysymdef.h
(``x11proto-dev``). Run once when xkb-data changes; the gibberish filter reads the file, so
neither users nor tests need xkb-data.

    python scripts/keyboard_rows.py [--symbols /usr/share/X11/xkb/symbols]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import unicodedata
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "src" / "convoscope" / "filters" / "data" / "keyboard_rows.json"
KEYSYMDEF = Path("/usr/include/X11/keysymdef.h")
ROWS = {"top": [f"AD{i:02d}" for i in range(1, 13)], "home": [f"AC{i:02d}" for i in range(1, 12)],
        "bottom": [f"AB{i:02d}" for i in range(1, 11)]}
_SECTION = re.compile(r'((?:\w+\s+)*)xkb_symbols\s+"([^"]+)"\s*\{(.*?)\n\};', re.DOTALL)
_KEY = re.compile(r"key\s+<(\w+)>\s*\{[^\[]*\[\s*([^,\]\s]+)")
_TYPE = re.compile(r'type(?:\[\w+\])?\s*=\s*"[^"]*"\s*,?')
_INCLUDE = re.compile(r'include\s+"([^"]+)"')
_DEFINE = re.compile(r"#define XK_(\w+)\s+0x([0-9a-fA-F]+)\s*/\*[^*]*U\+([0-9A-Fa-f]{4,6})")


def keysyms() -> dict[str, str]:
    table = {}
    for match in _DEFINE.finditer(KEYSYMDEF.read_text(encoding="latin-1")):
        table[match.group(1)] = chr(int(match.group(3), 16))
    return table


def to_char(keysym: str, table: dict[str, str]) -> str | None:
    if keysym in table:
        return table[keysym]
    if re.fullmatch(r"U[0-9A-Fa-f]{4,6}", keysym):
        return chr(int(keysym[1:], 16))
    # A Unicode keysym is 0x01000000 + the code point; xkb-data writes it with or without the
    # leading zero (``0x100091F`` in np, bd, pk, kh, la: those layouts were dropped before).
    unicode_keysym = re.fullmatch(r"0x0?1([0-9A-Fa-f]{6})", keysym)
    if unicode_keysym:
        return chr(int(unicode_keysym.group(1), 16))
    if len(keysym) == 1:
        return keysym
    return None


class Symbols:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.cache: dict[str, list[tuple[str, str, str]]] = {}

    def sections(self, name: str) -> list[tuple[str, str, str]]:
        if name not in self.cache:
            path = self.folder / name
            text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
            text = re.sub(r"//[^\n]*", "", text)
            self.cache[name] = [(flags, section, body) for flags, section, body in _SECTION.findall(text)]
        return self.cache[name]

    def keys(self, reference: str, depth: int = 0) -> dict[str, str]:
        """Key name -> first-level keysym of ``file(section)`` with its includes (later wins)."""
        name, _, section = reference.partition("(")
        section = section.rstrip(")")
        found = self.sections(name)
        chosen = next((body for flags, sec, body in found if sec == section), None) if section else \
            next((body for flags, _, body in found if "default" in flags), found[0][2] if found else None)
        if chosen is None or depth > 8:
            return {}
        keys: dict[str, str] = {}
        for line in chosen.splitlines():
            include = _INCLUDE.search(line)
            if include:
                for part in include.group(1).split("+"):
                    keys.update(self.keys(part, depth + 1))
            for key, keysym in _KEY.findall(_TYPE.sub("", line)):
                if keysym not in ("NoSymbol", "any"):  # both keep what an include put there
                    keys[key] = keysym
        return keys


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--symbols", type=Path, default=Path("/usr/share/X11/xkb/symbols"))
    args = parser.parse_args()
    table = keysyms()
    symbols = Symbols(args.symbols)
    layouts: dict[str, list[str]] = {}
    for path in sorted(args.symbols.iterdir()):
        if not path.is_file():
            continue
        keys = symbols.keys(path.name)
        rows = []
        for names in ROWS.values():
            chars = [to_char(keys[name], table) for name in names if name in keys]
            # Letters and the vowel signs InScript and Kedmanee put on letter keys.
            row = "".join(char.lower() for char in chars if char and unicodedata.category(char)[0] in "LM")
            if len(row) >= 5:
                rows.append(row)
        if len(rows) == 3:
            layouts[path.name] = rows
    version = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "xkb-data"], capture_output=True,
                             text=True, check=False).stdout.strip()
    about = {"generator": "scripts/keyboard_rows.py", "xkb-data": version,
             "rows": "top, home, bottom letter rows of each file's default layout, first level, lower case"}
    OUT.write_text(json.dumps({"about": about, "layouts": layouts}, ensure_ascii=False, indent=0) + "\n",
                   encoding="utf-8")
    print(f"{OUT}: {len(layouts)} layouts")


if __name__ == "__main__":
    main()
