"""`docker_api`: an inspect sandbox environment on the Docker engine API (the `docker` SDK).

Importing this package registers the provider, so `Task(sandbox="docker_api")`,
`Task(sandbox=("docker_api", DockerConfig(memory_mb=1024)))`, `inspect eval ... --sandbox docker_api`
and `harness eval ... sandbox=docker` work. One container per sample from a locally built image
(`ensure_sandbox_image`); see sandboxes/README.md for the isolation it gives and how it differs
from inspect's own compose-based `docker` provider (the compose files in this folder).
"""

from ._channel import SupervisorError
from ._config import WORKDIR, DockerConfig, config_of, from_compose
from ._engine import (
    LABEL_KIND,
    LABEL_OWNER,
    DockerUnavailableError,
    docker_client,
    docker_problem,
    own_containers,
    owner_alive,
    owner_labels,
    reap_stale_containers,
    require_docker,
)
from ._images import (
    BASE_PACKAGES,
    ImageBuildError,
    base_image_tag,
    debian_mirror,
    ensure_base_image,
    ensure_sandbox_image,
    ensure_vllm_image,
    image_exists,
    image_info,
    sandbox_image_tag,
    vllm_image_tag,
)
from ._sandbox import PROVIDER, DockerSandboxEnvironment
from ._seccomp import seccomp_profile

__all__ = [
    "BASE_PACKAGES",
    "LABEL_KIND",
    "LABEL_OWNER",
    "PROVIDER",
    "WORKDIR",
    "DockerConfig",
    "DockerSandboxEnvironment",
    "DockerUnavailableError",
    "ImageBuildError",
    "SupervisorError",
    "base_image_tag",
    "config_of",
    "debian_mirror",
    "docker_client",
    "docker_problem",
    "ensure_base_image",
    "ensure_sandbox_image",
    "ensure_vllm_image",
    "from_compose",
    "image_exists",
    "image_info",
    "own_containers",
    "owner_alive",
    "owner_labels",
    "reap_stale_containers",
    "require_docker",
    "sandbox_image_tag",
    "seccomp_profile",
    "vllm_image_tag",
]
