"""`python -m sandboxes.k8s render`: write the values files; `check`: compare and validate them."""

from __future__ import annotations

import sys

import yaml

from sandboxes.k8s import TASKS, render_values, validate_values, values_path


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "check"
    failed = 0
    for task in TASKS:
        text = render_values(task)
        path = values_path(task)
        if command == "render":
            path.write_text(text)
            print(f"wrote {path}")
        elif path.read_text() != text:
            print(f"{path}: differs from render_values({task!r}); run `render`", file=sys.stderr)
            failed += 1
        validate_values(yaml.safe_load(text))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
