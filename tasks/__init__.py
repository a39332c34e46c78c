"""One package per benchmark; each `tasks/<name>/task.py` defines `@task <name>`."""
