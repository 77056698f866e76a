"""A tiny rubric so that prompts stay short, for the runs that start real processes."""

CRITERIA = """
suite: test-short
description: a tiny rubric so that prompts stay short
criteria:
  - name: clarity
    question: Is the answer clear?
    definition: Clear answers say one thing plainly.
    scale: {kind: range, minimum: 1, maximum: 3}
    levels:
      - {value: 1, definition: unclear, examples: ["asdf qwer"]}
      - {value: 2, definition: partly clear, examples: ["maybe buses"]}
      - {value: 3, definition: clear, examples: ["More buses at night."]}
"""
