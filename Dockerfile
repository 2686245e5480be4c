# ecpi workshop image: the ecpi binary, the "ecpi (Go)" Jupyter kernel, the data and the notebooks,
# served by Debian's Jupyter Notebook on port 8888. Built by `make docker` or `docker compose build`
# (see docs/docker.md).
#
# Two stages. "build" runs `make setup` exactly as a fresh machine does; the final image takes from it only
# what the server and the GoNB kernel need at run time: Go 1.27.3 (the kernel compiles every cell), GoNB,
# goimports and gopls, the data, the XLA plugin, the ecpi sources, and Go caches cut down to ecpi's own
# dependencies (docker/slim-go-caches.sh). No Debian data packages, tool sources or build tree.
#
# The base is a tag, not a digest: the tag is what can be pinned when images are imported offline
# (`make docker` and `make docker-test` build the same Debian release with debootstrap and pass it here).
ARG BASE_IMAGE=debian:bookworm

# What both stages need: the extra CA certificates (docker/ca-certificates/*.crt, for builds behind a
# TLS-inspecting proxy), a C compiler (go-xla's PJRT binding uses cgo, in `make setup` and in every notebook
# cell), make and Python.
FROM ${BASE_IMAGE} AS base
ENV DEBIAN_FRONTEND=noninteractive \
    ECPI_SRC=/opt/ecpi/src \
    ECPI_HOME=/opt/ecpi/home \
    PATH=/usr/local/go/bin:$PATH
COPY docker/ca-certificates/ /usr/local/share/ca-certificates/
# Packages install without their manuals, documentation (but for copyright files) and translations.
RUN printf '%s\n' 'path-exclude=/usr/share/doc/*' 'path-include=/usr/share/doc/*/copyright' \
      'path-exclude=/usr/share/man/*' 'path-exclude=/usr/share/locale/*' > /etc/dpkg/dpkg.cfg.d/ecpi-slim \
 && apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates gcc libc6-dev make python3 \
 && update-ca-certificates \
 && apt-get clean && rm -rf /var/lib/apt/lists/*


FROM base AS build
# ECPI_GPU=1 adds the XLA CUDA PJRT plugin and NVIDIA libraries (the compose "gpu" profile sets it).
ARG ECPI_GPU=0
RUN apt-get update && apt-get install -y --no-install-recommends curl unzip g++ python3-pip

WORKDIR ${ECPI_SRC}

# The toolchain and module downloads first, in their own layer, so that editing the sources does not
# download Go 1.27.3 and the modules again. The base has no Go: setup-toolchain.sh fetches Go 1.27.3
# from the module proxy into /usr/local/go.
COPY Makefile go.mod go.sum ./
COPY scripts/ scripts/
RUN make toolchain

# Then exactly what a fresh machine runs: data, XLA plugin, Jupyter kernel, the ecpi binary.
COPY . .
RUN make setup

# The GPU variant: the CUDA plugin, and the kernel reinstalled with xla:cuda as its backend
# (setup-kernel.sh writes the backend into the kernelspec's environment).
RUN if [ "${ECPI_GPU}" = 1 ]; then \
      bash docker/install-cuda-plugin.sh && ECPI_KERNEL_BACKEND=xla:cuda bash scripts/setup-kernel.sh; \
    fi

RUN bash docker/slim-go-caches.sh /opt/ecpi/go-caches


FROM base
# The Jupyter server (classic Notebook UI and the /api REST endpoints), bookworm's version.
ARG JUPYTER_NOTEBOOK_PACKAGE=jupyter-notebook=6.4.12-2.2
RUN apt-get update \
 && apt-get install -y --no-install-recommends "${JUPYTER_NOTEBOOK_PACKAGE}" \
 && apt-get clean && rm -rf /var/lib/apt/lists/*

COPY --from=build /usr/local/go /usr/local/go
COPY --from=build /opt/ecpi/go-caches/mod /root/go/pkg/mod
COPY --from=build /opt/ecpi/go-caches/build /root/.cache/go-build
COPY --from=build /opt/ecpi/home/data /opt/ecpi/home/data
COPY --from=build /opt/ecpi/home/xla /opt/ecpi/home/xla
COPY --from=build /opt/ecpi/home/kernel /opt/ecpi/home/kernel
COPY --from=build /root/.local/share/jupyter/kernels/ecpi /root/.local/share/jupyter/kernels/ecpi

WORKDIR ${ECPI_SRC}
COPY . .
COPY --from=build /opt/ecpi/src/bin/ecpi bin/ecpi
# `ecpi` on the PATH (`docker compose exec jupyter ecpi`): docker/ecpi sets scripts/env.sh's environment, runs bin/ecpi.
COPY docker/ecpi /usr/local/bin/ecpi

# JUPYTER_TOKEN is the login token (compose passes its default, "ecpi"); JUPYTER_IP is where the server
# listens inside the container (0.0.0.0 so that the published port reaches it).
ENV JUPYTER_IP=0.0.0.0 \
    JUPYTER_PORT=8888
EXPOSE 8888
CMD ["bash", "docker/start-jupyter.sh"]
