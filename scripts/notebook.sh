#!/usr/bin/env bash
# make notebook: Jupyter with the "ecpi (Go)" kernel on this machine, opening in notebooks/.
#  - the server: JupyterLab or the Notebook server already installed (Debian's, or in $ECPI_HOME/jupyter);
#    else Debian's jupyter-notebook (as root with apt), else `notebook` from PyPI in a venv $ECPI_HOME/jupyter;
#  - the kernel: `make notebook` runs `make kernel` first; run alone, this script asks for it when missing;
#  - listens on 127.0.0.1 only, with a token: JUPYTER_TOKEN, else a random one; port ECPI_NOTEBOOK_PORT
#    (default 8888, or the next free one). Prints the URL, then runs in the foreground: Ctrl-C stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
venv="$ECPI_HOME/jupyter"

say() { echo "notebook: $*" >&2; }

# Prints "PYTHON MODULE CONFIG": the server's Python, its module, and its settings class
# (jupyter_server's ServerApp, or NotebookApp for the classic Notebook 6).
find_server() {
  local py
  for py in /usr/bin/python3 "$venv/bin/python"; do
    [ -x "$py" ] || continue
    if "$py" -c 'import jupyterlab' 2> /dev/null; then echo "$py jupyterlab ServerApp"; return; fi
    if "$py" -c 'import notebook.notebookapp' 2> /dev/null; then echo "$py notebook NotebookApp"; return; fi
    if "$py" -c 'import notebook.app' 2> /dev/null; then echo "$py notebook ServerApp"; return; fi
  done
  return 1
}

install_server() {
  if [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
    say "installing Debian's jupyter-notebook"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends jupyter-notebook > /dev/null ||
      { apt-get update -qq && apt-get install -y -qq --no-install-recommends jupyter-notebook > /dev/null; }
  else
    say "installing the Jupyter Notebook server from PyPI into $venv"
    python3 -m venv "$venv" && "$venv/bin/pip" install -q notebook
  fi
}

free_port() {
  local port=$1
  while (: < "/dev/tcp/127.0.0.1/$port") 2> /dev/null; do port=$((port + 1)); done
  echo "$port"
}

server="$(find_server)" || { install_server && server="$(find_server)"; } ||
  { say "no Jupyter server could be installed: apt-get install jupyter-notebook (or pip install notebook)"; exit 1; }
read -r py module config <<< "$server"
"$py" -m jupyter_client.kernelspecapp list 2> /dev/null | grep -w ecpi > /dev/null ||
  { say 'the "ecpi (Go)" kernel is not installed: run `make notebook` (or `make kernel`)'; exit 1; }

port=$(free_port "${ECPI_NOTEBOOK_PORT:-8888}")
token=${JUPYTER_TOKEN:-$("$py" -c 'import secrets; print(secrets.token_hex(16))')}
root=notebook_dir
page=tree
[ "$config" = ServerApp ] && root=root_dir
[ "$module" = jupyterlab ] && page=lab
as_root=()
[ "$(id -u)" = 0 ] && as_root=(--allow-root) # containers and CI machines run as root
say "Jupyter ($module) with the ecpi kernel, Ctrl-C stops it:"
echo "  http://127.0.0.1:$port/$page?token=$token"
exec "$py" -m "$module" --no-browser "${as_root[@]}" --"$config".ip=127.0.0.1 --"$config".port="$port" --"$config".port_retries=0 \
  --"$config".token="$token" --"$config".$root="$PWD/notebooks"
