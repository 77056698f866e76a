"""Write items.jsonl and human.jsonl from ConTurE (Ghazarian et al., 2022; CC BY 4.0, Amazon).

Usage: python make_items.py PATH/TO/conture/data.json [--dialogues 8]

Each chatbot turn of the first dialogues becomes an item whose context is the conversation up to
it; its ``overall impression`` (0 dislike, 1 kind of like, 2 like; the majority of three crowd
workers) becomes the rating of the rater ``human:conture``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("--dialogues", type=int, default=8)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    arguments = parser.parse_args()
    dialogues = json.loads(arguments.source.read_text(encoding="utf-8"))[: arguments.dialogues]
    items, ratings = [], []
    for dialogue in dialogues:
        context: list[dict[str, str]] = []
        for number, turn in enumerate(dialogue["turns"], start=1):
            user = turn["user"].removeprefix("User:").strip()
            bot = turn["chatbot"].removeprefix("Chatbot:").strip()
            context.append({"speaker": "user", "text": user})
            item_id = f"d{dialogue['dialog_id']}-t{number}"
            items.append({"id": item_id, "context": list(context), "response": bot, "language": "en",
                          "meta": {"source": "ConTurE (CC BY 4.0)", "dialog_id": dialogue["dialog_id"]}})
            ratings.append({"item_id": item_id, "criterion": "overall", "rater": "human:conture",
                            "value": turn["overall impression"]})
            context.append({"speaker": "bot", "text": bot})
    write = lambda name, rows: (arguments.out / name).write_text(  # noqa: E731
        "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    write("items.jsonl", items)
    write("human.jsonl", ratings)
    print(f"{len(items)} items from {len(dialogues)} dialogues")


if __name__ == "__main__":
    main()
