"""Writes src/convoscope/filters/data/keyboard_rows.json: the three letter rows (first level) of
the default layout of every keyboard the system's XKB data knows (Debian's ``xkb-data``,
/usr/share/X11/xkb/symbols), keysyms turned into characters with X11's keysymdef.h
(``x11proto-dev``). Run once when xkb-data changes; the gibberish filter reads the file, so
neither users nor tests need xkb-data.

Input methods that are not XKB layouts (Korean 2-set, Chinese zhuyin) sit on the US keys and are
described by the m17n database (Debian's ``m17n-db``, /usr/share/m17n): their rows are the US
number and letter rows passed through the method's one-key table, under ``input_methods``.
Pinyin types the US letters themselves, so its rows are the US rows; what a pinyin method shows
is Han characters, so ``pinyin`` gives, for each character among the first ten candidates of a
syllable of m17n's ``zh-py.mim``, the syllables that offer it there (a mash typed through the
method can then be read back as keys).

    python scripts/keyboard_rows.py [--symbols /usr/share/X11/xkb/symbols] [--m17n /usr/share/m17n]
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


# One key typed alone: ("r" (set L1 ?ᄀ) (set T ?ᆨ) ?ㄱ (compose)) or ("q" ?ㄆ); the character
# shown is the last ``?X`` on the line.
_MIM_KEY = re.compile(r'^\s*\("(.)"(.*)\)\s*$')
_MIM_CHAR = re.compile(r"\?(.)")
INPUT_METHODS = {"ko-han2": "ko-han2.mim", "zh-bopomofo": "zh-bopomofo.mim"}
NUMBER_ROW = [f"AE{i:02d}" for i in range(1, 13)]


def mim_keys(path: Path) -> dict[str, str]:
    """Key -> character of the single-key entries of an m17n input method (first entry wins)."""
    table: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split(";;", 1)[0]
        match = _MIM_KEY.match(line)
        chars = _MIM_CHAR.findall(match.group(2)) if match else []
        if match and chars:
            table.setdefault(match.group(1), chars[-1])
    return table


_SYLLABLE = re.compile(r'^\s*\("([a-z]+)"\s*\(')
_QUOTED = re.compile(r'"([^"]*)"')
FIRST_CANDIDATES = 10


def pinyin_readings(path: Path) -> dict[str, list[str]]:
    """Han character -> syllables (toneless) whose first ten candidates hold it."""
    candidates: dict[str, str] = {}
    syllable = ""
    for line in path.read_text(encoding="utf-8").splitlines():
        start = _SYLLABLE.match(line)
        if start:
            syllable = start.group(1)
            line = line[start.end():]
        elif not line.lstrip().startswith('"'):
            syllable = ""
        if syllable:
            candidates[syllable] = candidates.get(syllable, "") + "".join(_QUOTED.findall(line))
    readings: dict[str, list[str]] = {}
    for syllable, chars in sorted(candidates.items()):
        for char in chars[:FIRST_CANDIDATES]:
            if unicodedata.name(char, "").startswith("CJK UNIFIED IDEOGRAPH"):
                readings.setdefault(char, []).append(syllable)
    return readings


def input_method_rows(m17n: Path, us: dict[str, str], table: dict[str, str]) -> dict[str, list[str]]:
    """The US number, top, home and bottom rows typed through each input method (rows of fewer
    than five letters, such as Korean's number row, are left out)."""
    out: dict[str, list[str]] = {}
    for name, file in INPUT_METHODS.items():
        path = m17n / file
        if not path.is_file():
            continue
        keys = mim_keys(path)
        rows = []
        for names in (NUMBER_ROW, *ROWS.values()):
            typed = [keys.get(to_char(us[name], table) or "") for name in names if name in us]
            row = "".join(char for char in typed if char and unicodedata.category(char)[0] in "LM")
            if len(row) >= 5:
                rows.append(row)
        out[name] = rows
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--symbols", type=Path, default=Path("/usr/share/X11/xkb/symbols"))
    parser.add_argument("--m17n", type=Path, default=Path("/usr/share/m17n"))
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
    methods = input_method_rows(args.m17n, symbols.keys("us"), table)
    about = {"generator": "scripts/keyboard_rows.py", "xkb-data": _version("xkb-data"),
             "m17n-db": _version("m17n-db"),
             "rows": "top, home, bottom letter rows of each file's default layout, first level, lower case",
             "input_methods": "US number, top, home, bottom rows through m17n's one-key table"}
    pinyin = pinyin_readings(args.m17n / "zh-py.mim") if (args.m17n / "zh-py.mim").is_file() else {}
    about["pinyin"] = f"syllables offering each Han character among their first {FIRST_CANDIDATES} candidates"
    data = {"about": about, "layouts": layouts, "input_methods": methods, "pinyin": pinyin}
    OUT.write_text(json.dumps(data, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    print(f"{OUT}: {len(layouts)} layouts, input methods {sorted(methods)}, {len(pinyin)} Han characters")


def _version(package: str) -> str:
    return subprocess.run(["dpkg-query", "-W", "-f", "${Version}", package], capture_output=True,
                          text=True, check=False).stdout.strip()


if __name__ == "__main__":
    main()
