# CPU vLLM server image (harness serve backend=docker on a machine without a GPU). vLLM is not in
# the image: the server runs the project's virtual environment and its base interpreter, mounted
# read-only from the host at their own paths (harness/models/docker_server.py), so no package is
# fetched inside a container. On a GPU host the stock `vllm/vllm-openai` image is used instead.
ARG BASE_IMAGE=icml26-harness/base:latest
FROM ${BASE_IMAGE}
RUN rm -rf /var/cache/apt/archives/*.deb /var/lib/apt/lists/* && mkdir -p /models /cache \
    && chmod 1777 /cache
ENV LANG=C.UTF-8 VLLM_NO_USAGE_STATS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
CMD ["sleep", "infinity"]
