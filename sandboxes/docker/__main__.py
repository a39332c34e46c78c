"""`python -m sandboxes.docker images|cleanup|status`: build the project's images (set-up),
remove containers left by dead harness processes, or show what is there."""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    from sandboxes.docker import (
        docker_problem,
        ensure_sandbox_image,
        ensure_vllm_image,
        image_info,
        reap_stale_containers,
    )

    command = argv[0] if argv else "status"
    problem = docker_problem()
    if problem is not None:
        print(f"docker: unavailable: {problem}", file=sys.stderr)
        return 3
    if command == "images":
        ensure_sandbox_image()
        ensure_vllm_image()
        for name, info in image_info().items():
            print(f"{name}: {info['tag']} ({'present' if info['present'] else 'missing'})")
        return 0
    if command == "cleanup":
        print(f"removed {reap_stale_containers()} stale container(s)")
        return 0
    if command == "status":
        for name, info in image_info().items():
            print(f"{name}: {info['tag']} ({'present' if info['present'] else 'missing'})")
        return 0
    print("usage: python -m sandboxes.docker images|cleanup|status", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
