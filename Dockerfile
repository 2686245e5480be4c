# ecpi workshop image: the ecpi binary, the "ecpi (Go)" Jupyter kernel, the data and the notebooks,
# served by Debian's Jupyter Notebook on port 8888. Built by `docker compose build` (see docs/docker.md).
#
# The base is a tag, not a digest: the tag is what can be pinned when images are imported offline
# (`make docker-test` builds the same Debian release with debootstrap and passes it here).
ARG BASE_IMAGE=debian:bookworm
FROM ${BASE_IMAGE}

# Debian mirror for the bookworm-backports suite (the Go bootstrap below); the base's own sources stay as they are.
ARG DEBIAN_MIRROR=http://deb.debian.org/debian
# bookworm's golang-go is Go 1.19, too old to honour GOTOOLCHAIN; backports' Go 1.23 fetches Go 1.27.3 itself.
ARG GO_BOOTSTRAP_PACKAGE=golang-1.23-go=1.23.5-1~bpo12+1
# The Jupyter server (classic Notebook UI and the /api REST endpoints), bookworm's version.
ARG JUPYTER_NOTEBOOK_PACKAGE=jupyter-notebook=6.4.12-2.2
# ECPI_GPU=1 adds the XLA CUDA PJRT plugin and NVIDIA libraries (the compose "gpu" profile sets it).
ARG ECPI_GPU=0

ENV DEBIAN_FRONTEND=noninteractive \
    ECPI_SRC=/opt/ecpi/src \
    ECPI_HOME=/opt/ecpi/home \
    PATH=/usr/lib/go-1.23/bin:$PATH

# Extra CA certificates (docker/ca-certificates/*.crt) for builds behind a TLS-inspecting proxy.
COPY docker/ca-certificates/ /usr/local/share/ca-certificates/
RUN echo "deb ${DEBIAN_MIRROR} bookworm-backports main" > /etc/apt/sources.list.d/backports.list \
 && apt-get update \
 && apt-get install -y --no-install-recommends \
      ca-certificates curl git make unzip xz-utils gcc g++ libc6-dev \
      python3 python3-pip \
      "${JUPYTER_NOTEBOOK_PACKAGE}" \
 && apt-get install -y --no-install-recommends -t bookworm-backports "${GO_BOOTSTRAP_PACKAGE}" \
 && update-ca-certificates \
 && rm -rf /var/lib/apt/lists/*

WORKDIR ${ECPI_SRC}

# The toolchain and module downloads first, in their own layer, so that editing the sources
# does not download Go 1.27.3 and the modules again.
COPY Makefile go.mod go.sum ./
COPY scripts/ scripts/
RUN make toolchain

# Then exactly what a fresh machine runs: toolchain, data, XLA plugin, Jupyter kernel, the ecpi binary.
COPY . .
RUN make setup && rm -rf /var/lib/apt/lists/*

# The GPU variant: the CUDA plugin, and the kernel reinstalled with xla:cuda as its backend
# (setup-kernel.sh writes the backend into the kernelspec's environment).
RUN if [ "${ECPI_GPU}" = 1 ]; then \
      bash docker/install-cuda-plugin.sh && ECPI_KERNEL_BACKEND=xla:cuda bash scripts/setup-kernel.sh; \
    fi

# JUPYTER_TOKEN is the login token (compose passes its default, "ecpi"); JUPYTER_IP is where the server
# listens inside the container (0.0.0.0 so that the published port reaches it).
ENV JUPYTER_IP=0.0.0.0 \
    JUPYTER_PORT=8888
EXPOSE 8888
CMD ["bash", "docker/start-jupyter.sh"]
