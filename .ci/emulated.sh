#!/usr/bin/env bash
# Tests the ARM targets for real, under qemu-user emulation (issue 20):
#  - armv7 (Debian bookworm armhf root): the BM25-only build (IIIDIR_LANES=lexical) from the sdist,
#    compiled `_rank` core required; `_rank.available()` must say compiled and no dense lane, and
#    the installed metadata must have pulled no numpy/onnxruntime; then the `portable` tests
#    (need neither the dense extra nor network nor a browser: `_rank` unit and property tests,
#    lexical search, the surfaces' unit tests) and the README's main-job command.
#  - aarch64 (Debian bookworm arm64 root): the full build with the `dense` extra, every
#    dependency from binary wheels only; the `rank` and `dense` tests and one hybrid
#    `directory::search_functions` call over the shipped example catalog.
# The roots live in a machine-level cache outside the clone and are reused while their stamp
# (suite, arch, package set, recipe) matches. Without binfmt the stage is skipped, and under
# CI=true that is a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
VENV_PY=${VENV_PY:-$ROOT/.venv/bin/python}
CACHE=${IIIDIR_EMU_CACHE:-/var/cache/iii-directory/emu}
SUITE=bookworm
ARCHES=${IIIDIR_EMU_ARCHES:-armhf arm64}
# The roots' package set, with its dependency closure resolved by apt on the host. Nothing is
# compiled in a root (our wheel and PyYAML are cross-built on the host), so no gcc: python3-dev
# is there for the headers, pyconfig.h and sysconfig data the cross-build reads; libstdc++6 for
# the manylinux wheels that link it (onnxruntime, tokenizers); bash, coreutils and dash for the
# in-root scripts (the extract variant has no Essential set); base-passwd for /etc/passwd; git
# for the tests and the worker's repository code.
PACKAGES=python3,python3-venv,python3-dev,libstdc++6,base-passwd,bash,coreutils,dash,git
RECIPE=2   # bump when the way a root is made changes (2: extracted by the host, no gcc)
START=$(date +%s)
WORK=$(mktemp -d)
say() { printf '\n== %s\n' "$*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
elapsed() { local s=$(( $(date +%s) - $1 )); printf '%dm%02ds' $((s / 60)) $((s % 60)); }
unmount_all() {  # unmount <root>: stop what still runs in it, then undo its mounts, deepest first
  local dir=$1 p
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/root" 2>/dev/null)" = "$dir" ] && kill -9 "${p#/proc/}" 2>/dev/null || true
  done
  awk -v d="$dir/" 'index($2, d) == 1 {print $2}' /proc/self/mounts | sort -r | while read -r m; do
    umount "$m" 2>/dev/null || umount -l "$m" || true
  done
}
cleanup() {
  local arch
  for arch in $ARCHES; do unmount_all "$CACHE/$arch"; unmount_all "$CACHE/$arch.new"; done
  rm -rf "$WORK"
}
trap cleanup EXIT

# -- 1. binfmt ----------------------------------------------------------------------------------
skip_or_fail() {
  if [ "${CI:-}" = true ]; then fail "emulated ARM stage cannot run: $*"; fi
  echo "SKIP: emulated ARM stage not run: $* (this is a failure under CI=true)"
  exit 0
}
apt_install() {
  [ "$(id -u)" = 0 ] || return 1
  { apt-get -o DPkg::Lock::Timeout=600 update -qq \
    && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq "$@"; } \
    >"$WORK/apt.log" 2>&1 || { tail -20 "$WORK/apt.log"; return 1; }
}
say "1. binfmt"
t=$(date +%s)
[ "$(id -u)" = 0 ] || skip_or_fail "needs root (chroot, mount, binfmt)"
if ! command -v qemu-arm-static >/dev/null || ! command -v qemu-aarch64-static >/dev/null \
   || ! command -v update-binfmts >/dev/null || ! command -v mmdebstrap >/dev/null; then
  apt_install qemu-user-static binfmt-support mmdebstrap || skip_or_fail "cannot install qemu-user-static binfmt-support mmdebstrap"
fi
# Debian's cross-compilers: our two Cython modules are compiled on the host, not under qemu.
if ! command -v arm-linux-gnueabihf-gcc >/dev/null || ! command -v aarch64-linux-gnu-gcc >/dev/null; then
  apt_install gcc-arm-linux-gnueabihf gcc-aarch64-linux-gnu || fail "cannot install the cross-compilers gcc-arm-linux-gnueabihf gcc-aarch64-linux-gnu"
fi
BINFMT=/proc/sys/fs/binfmt_misc
if [ ! -e "$BINFMT/status" ]; then
  mount -t binfmt_misc binfmt_misc "$BINFMT" 2>"$WORK/binfmt.err" || skip_or_fail "cannot mount binfmt_misc: $(cat "$WORK/binfmt.err")"
fi
for h in qemu-arm qemu-aarch64; do
  update-binfmts --enable "$h" >/dev/null 2>&1 || true
  grep -qx enabled "$BINFMT/$h" 2>/dev/null || skip_or_fail "binfmt handler $h cannot be registered"
done
echo "binfmt: qemu-arm, qemu-aarch64 enabled ($(elapsed "$t"))"

# -- 2. the Debian mirror of the machine's own apt sources ----------------------------------------
MIRROR=${IIIDIR_EMU_MIRROR:-$(python3 - "$SUITE" <<'PY'
import glob, re, sys
suite = sys.argv[1]
found = []
for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):  # deb822 stanzas
    for stanza in re.split(r"\n\s*\n", open(path, encoding="utf-8").read()):
        fields = dict(re.findall(r"^([A-Za-z-]+):\s*(.*)$", stanza, re.M))
        if "deb" in fields.get("Types", "").split() and suite in fields.get("Suites", "").split() \
           and fields.get("Enabled", "yes").lower() != "no":
            found += fields.get("URIs", "").split()
for path in ["/etc/apt/sources.list", *sorted(glob.glob("/etc/apt/sources.list.d/*.list"))]:
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError:
        continue
    for line in lines:
        parts = re.sub(r"\[[^]]*\]", "", line.split("#")[0]).split()
        if len(parts) >= 3 and parts[0] == "deb" and parts[2] == suite:
            found.append(parts[1])
print(found[0] if found else "")
PY
)}
[ -n "$MIRROR" ] || fail "no '$SUITE' entry in /etc/apt/sources.list*: cannot pick a Debian mirror"

# -- 3. roots ------------------------------------------------------------------------------------
stamp_of() { printf 'suite=%s arch=%s packages=%s recipe=%s\n' "$SUITE" "$1" "$PACKAGES" "$RECIPE"; }
bootstrap() {  # bootstrap <arch>: reuse the cached root when its stamp matches, else make it anew
  local arch=$1 dir=$CACHE/$1 t
  t=$(date +%s)
  if [ -x "$dir/usr/bin/python3" ] && [ "$(cat "$dir/.iiidir-stamp" 2>/dev/null)" = "$(stamp_of "$arch")" ]; then
    echo "[$arch] root: reused $dir ($(elapsed "$t"))"
    return 0
  fi
  unmount_all "$dir"; unmount_all "$dir.new"   # never delete through a leftover bind mount
  rm -rf --one-file-system "$dir" "$dir.new"
  # --variant=extract: apt on the host resolves and downloads the closure of the package set and
  # the host unpacks it (about 10 s per root); no dpkg and no maintainer script runs under qemu
  # (with --variant=minbase they did: 94 minutes for the two roots at load 10-13). The
  # merged-usr hook lays out /bin, /sbin, /lib as links into /usr, as a bookworm install has.
  mmdebstrap --mode=root --variant=extract --architectures="$arch" --include="$PACKAGES" \
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr "$SUITE" "$dir.new" "$MIRROR" \
    >"$WORK/mmdebstrap-$arch.log" 2>&1 || { tail -30 "$WORK/mmdebstrap-$arch.log"; return 1; }
  configure_root "$dir.new" || return 1
  stamp_of "$arch" >"$dir.new/.iiidir-stamp"
  mv "$dir.new" "$dir"
  echo "[$arch] root: bootstrapped from $MIRROR ($(elapsed "$t"))"
}
# The .pyc files the root's Python would write on first import, written natively instead (as the
# python3.11 maintainer script does at install): the host's CPython is 3.11 too (same magic
# number, so the root's Python takes them while the sources' mtimes match); the recorded paths are
# the root's. Folders copied into a run (the venv, the kept dependencies) keep their mtimes.
compile_for_root() {  # compile_for_root <root> <folder inside the root, absolute>
  python3 -c 'import sys; assert sys.version_info[:2] == (3, 11), sys.version' 2>/dev/null || return 0
  python3 -m compileall -q -j 2 -s "$1" -p / "$1$2" >/dev/null 2>&1 || true
}
# What the skipped maintainer scripts did that the stage needs, done here on the host:
# base-passwd's /etc/passwd and /etc/group (git and getpass look the user up) and python3.11's
# byte-compiling of the standard library (natively, see compile_for_root). Not needed, so not
# done: the ld.so cache (glibc's loader searches the multiarch folders without one),
# ca-certificates' bundle (the host's is copied in), /usr/local's site folders and
# the alternatives (awk, which), which nothing in the stage calls.
configure_root() {  # configure_root <root>
  local dir=$1
  cp "$dir/usr/share/base-passwd/passwd.master" "$dir/etc/passwd"
  cp "$dir/usr/share/base-passwd/group.master" "$dir/etc/group"
  [ -x "$dir/usr/bin/python3" ] && [ -x "$dir/bin/bash" ] || { echo "the extracted root lacks python3 or bash"; return 1; }
  compile_for_root "$dir" /usr/lib/python3.11   # python3.11's postinst: py_compile of the stdlib
}
say "2. Debian $SUITE roots in $CACHE"
mkdir -p "$CACHE"
for arch in $ARCHES; do  # one lock per root: runs on different roots may overlap
  exec {lockfd}>"$CACHE/.lock-$arch"
  flock -w 1800 "$lockfd" || fail "another run holds $CACHE/.lock-$arch"
done
pids=()
for arch in $ARCHES; do bootstrap "$arch" & pids+=($!); done
for p in "${pids[@]}"; do wait "$p" || fail "bootstrap of a root failed"; done
echo "roots ready ($(elapsed "$START") into the stage)"

# -- 4. the sdist, the tests, the host's pip settings ------------------------------------------------
say "3. sdist"
t=$(date +%s)
[ -x "$VENV_PY" ] || VENV_PY=python3
# Without build isolation when the venv already holds the build requirements (an isolated
# build env costs minutes of pip work on a loaded machine and makes the same sdist).
"$VENV_PY" -c 'import setuptools, Cython' 2>/dev/null || fail "$VENV_PY lacks setuptools/Cython (the cross-build runs setup.py on the host)"
ISOLATION=--no-isolation
"$VENV_PY" -c 'import setuptools, Cython, wheel, build' 2>/dev/null || ISOLATION=
"$VENV_PY" -m build --sdist $ISOLATION --outdir "$WORK/dist" . >"$WORK/sdist.log" 2>&1 || { tail -30 "$WORK/sdist.log"; fail "python -m build --sdist"; }
SDIST=$(ls "$WORK"/dist/*.tar.gz)
# The pure-Python part of the `test` extra, with its version ranges from setup.py.
TEST_DEPS=$(python3 - <<'PY'
import ast
tree = ast.parse(open("setup.py", encoding="utf-8").read())
test = next(ast.literal_eval(n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "TEST")
wanted = {"pytest", "hypothesis", "pytest-timeout"}
print(" ".join(r for r in test if r.split(">")[0].split("=")[0].split("<")[0].strip() in wanted))
PY
)
[ "$(echo "$TEST_DEPS" | wc -w)" = 3 ] || fail "setup.py TEST lacks pytest/hypothesis/pytest-timeout: [$TEST_DEPS]"
echo "$(basename "$SDIST"); test deps: $TEST_DEPS ($(elapsed "$t"))"

say "3b. musl x86_64: the base dependencies resolve to musllinux wheels (binary only)"
t=$(date +%s)
python3 -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]))' >"$WORK/base.txt"
python3 -m pip download -q --only-binary=:all: --platform musllinux_1_2_x86_64 --platform musllinux_1_1_x86_64 \
  --python-version 3.11 --implementation cp --abi cp311 --abi abi3 --abi none -d "$WORK/musl" -r "$WORK/base.txt" \
  >"$WORK/musl.log" 2>&1 || { grep -v WARNING "$WORK/musl.log" | tail -20; fail "a base dependency has no musllinux x86_64 wheel"; }
echo "$(ls "$WORK/musl" | grep -c musllinux) musllinux wheels, $(ls "$WORK/musl" | grep -c none-any) pure-Python ($(elapsed "$t"))"

# The environment variables pip and OpenSSL read on the host, passed into the roots as they are.
CHROOT_ENV=(HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 TMPDIR=/tmp)
while IFS='=' read -r name _; do
  case "$name" in
    PIP_*|SSL_CERT_FILE|SSL_CERT_DIR|REQUESTS_CA_BUNDLE|CURL_CA_BUNDLE|http_proxy|https_proxy|no_proxy|HTTP_PROXY|HTTPS_PROXY|NO_PROXY)
      CHROOT_ENV+=("$name=${!name}");;
  esac
done < <(env)
# The files those settings and the host's pip configuration name (configuration files, CA bundles,
# constraint files, local indexes and find-links folders): files are copied into each root at
# the same path, folders bind-mounted read-only (a file:// index's parent, as its pages link up).
PIP_CONFIGS=(/etc/pip.conf /etc/xdg/pip/pip.conf "$HOME/.config/pip/pip.conf" "$HOME/.pip/pip.conf" ${PIP_CONFIG_FILE:-})
python3 - "${PIP_CONFIGS[@]}" >"$WORK/host-paths" <<'PY'
import configparser, os, sys
values = [v for k, v in os.environ.items() if k.startswith("PIP_") or k in (
    "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")]
values.append("/etc/ssl/certs/ca-certificates.crt")
for path in sys.argv[1:]:
    if not os.path.isfile(path):
        continue
    print("file", path)
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(path)
    values += [v for section in parser.sections() for v in parser[section].values()]
seen = set()
for value in values:
    for token in value.split():
        token = token.strip("'\"")
        token = token[len("file://"):] if token.startswith("file://") else token
        if not token.startswith("/") or not os.path.exists(token):
            continue
        token = os.path.realpath(token) if os.path.isfile(token) else token.rstrip("/")
        if os.path.isdir(token) and os.path.basename(token) == "simple":
            token = os.path.dirname(token)
        if token not in seen:
            seen.add(token)
            print("file" if os.path.isfile(token) else "dir", token)
PY
echo "host pip settings carried into the roots:"; sed 's/^/  /' "$WORK/host-paths"

# -- 5. per root: mounts, install, tests ---------------------------------------------------------
# Only what must run on ARM runs under qemu: our wheel's install, the checks, the calls, the tests. pip's
# resolving, downloading and unpacking of the dependencies runs natively on the host, installing
# for the root's platform (`pip install --target <root venv> --platform … --only-binary=:all:`,
# bookworm: CPython 3.11, glibc 2.36); a dependency with no wheel for the platform (armv7: PyYAML)
# is cross-built once on the host from its sdist, like our wheel, and kept in the root's wheelhouse.

prepare() {  # prepare <arch>: mounts, CA bundle and pip settings, sdist and tests in /iiidir
  local dir=$CACHE/$1 kind path
  unmount_all "$dir"
  mount -t proc proc "$dir/proc"
  mount -t sysfs -o ro sysfs "$dir/sys"   # onnxruntime reads the CPU list there
  mount --rbind /dev "$dir/dev" && mount --make-rslave "$dir/dev"
  while read -r kind path; do
    if [ "$kind" = file ]; then
      mkdir -p "$dir$(dirname "$path")" && cp -fL "$path" "$dir$path"
    else
      mkdir -p "$dir$path" && mount --bind "$path" "$dir$path" && mount -o remount,bind,ro "$dir$path"
    fi
  done <"$WORK/host-paths"
  cp -fL /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
  rm -rf "$dir/iiidir" && mkdir -p "$dir/iiidir/dist" "$dir/iiidir/project" "$dir/var/lib/iiidir/wheelhouse"
  cp "$SDIST" "$dir/iiidir/dist/"
  # The CLI with the 3 s budget of a call's query embeddings (DenseLane.query_timeout_s, sized
  # for a native CPU) raised to 120 s: under qemu the encoder takes ~15-30 s for two queries.
  cat >"$dir/iiidir/cli_under_qemu.py" <<'PY'
import sys

from iii_directory.encoder.dense_lane import DenseLane

DenseLane.query_timeout_s = 120.0
from iii_directory.cli import main  # noqa: E402

sys.exit(main())
PY
  cp -r tests pyproject.toml "$dir/iiidir/project/"
  cp -r benchmarks "$dir/iiidir/project/"  # the held-out catalog and the static table's recipe
  find "$dir/iiidir/project" -name __pycache__ -prune -exec rm -rf {} +
}

inroot() {  # inroot <arch> <script>: run a bash script inside the root
  # The limit is a guard against a hung emulator, not the stage's budget: on this shared 2-core
  # machine at load 10-13 a test step took over 20 minutes (it was killed at the old 1200 s).
  # CFLAGS as wheels.toml builds the published wheels (-O3), without debug info (faster under qemu)
  timeout --kill-after=30 "${IIIDIR_EMU_TIMEOUT:-3000}" chroot "$CACHE/$1" /usr/bin/env -i "${CHROOT_ENV[@]}" CFLAGS="-O3 -g0" \
    ${ROOT_ENV[$1]} /bin/bash -c "set -euo pipefail; cd /iiidir; $2"
}

host_pip() {  # host_pip <arch> <target dir> <pip args…>: host pip installing for the root's platform
  local arch=$1 target=$2 machine m plat=()
  shift 2
  machine=${MACHINE[$arch]}
  for m in $(seq 17 36); do plat+=(--platform "manylinux_2_${m}_$machine"); done
  python3 -m pip install -q --no-compile --upgrade --target "$target" \
    --find-links "$CACHE/$arch/var/lib/iiidir/wheelhouse" "${plat[@]}" \
    --platform "manylinux2014_$machine" --platform "linux_$machine" \
    --implementation cp --python-version 3.11 --abi cp311 --abi abi3 --abi none --only-binary=:all: "$@"
}

install_deps() {  # install_deps <arch> <target dir> <requirements…>: for the root, from the host
  local arch=$1 target=$2 name spec tries=0 file log=$WORK/deps-$1.log
  shift 2
  until host_pip "$arch" "$target" "$@" >"$log" 2>&1; do
    name=$(sed -n 's/^ERROR: No matching distribution found for \([A-Za-z0-9_.-]*\).*/\1/p' "$log" | head -1)
    spec=$(sed -n 's/^ERROR: Could not find a version that satisfies the requirement \([^;(]*\).*/\1/p' "$log" | head -1)
    if [ -z "$name" ] || [ "$tries" -ge 4 ]; then grep -v WARNING "$log" | tail -20; return 1; fi
    spec=$(echo $spec); tries=$((tries + 1))
    echo "[$arch] no $MACHINE_NAME_OF wheel for $spec: cross-building it on the host from its sdist"
    rm -rf "$WORK/sdist-$arch" && "$VENV_PY" -m pip download -q --no-deps --no-binary="$name" --no-build-isolation \
      -d "$WORK/sdist-$arch" "$spec" >>"$log" 2>&1 || { tail -20 "$log"; return 1; }
    file=$(ls "$WORK/sdist-$arch"/*)
    cross_build "$arch" "$file" "$CACHE/$arch/var/lib/iiidir/wheelhouse" >>"$log" 2>&1 || { tail -20 "$log"; return 1; }
    echo "[$arch] $(cd "$CACHE/$arch/var/lib/iiidir/wheelhouse" && ls -t | head -1)"
  done
  grep -v -e WARNING -e "dependency resolver" -e "which is incompatible" -e "but you have" "$log" | tail -5 || true
}

# The dependency tree pip resolves for a root is kept in the root (/var/lib/iiidir/deps/<key>)
# and copied into each run's fresh venv: resolving, downloading and unpacking ~40 wheels for a
# foreign platform cost 2-6 minutes per root here, every run. The key is what pip was asked for:
# our wheel's requirements (its metadata, not its file), the test requirements, the constraints
# and the ISO week, so a new dependency release is picked up within a week. Our own package is
# taken out of the kept tree; the root's pip installs it (step "install the wheel").
deps() {  # deps <arch> <our wheel> <extra> <pip args…>: the dependencies of wheel[extra] into the root's venv
  local arch=$1 wheel=$2 extra=$3 keep=$CACHE/$1/var/lib/iiidir/deps key
  local site=$CACHE/$1/iiidir/venv/lib/python3.11/site-packages
  shift 3
  key=$({ "$VENV_PY" -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); print(z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode())' "$wheel" \
          | grep '^Requires-Dist'; echo "[$extra] ${*//$WORK/}"; cat ${EXTRA_FILES[$arch]}; date -u +%G-W%V; } | sha256sum | cut -c1-16)
  if [ ! -f "$keep/$key/.complete" ]; then
    rm -rf "$keep" && mkdir -p "$keep"
    install_deps "$arch" "$keep/$key" "$wheel[$extra]" "$@" || return 1
    rm -rf "$keep/$key"/iii_directory "$keep/$key"/iii_directory-*.dist-info "$keep/$key"/_rank "$keep/$key"/bin
    compile_for_root "$CACHE/$arch" "/var/lib/iiidir/deps/$key"
    touch "$keep/$key/.complete"
    echo "resolved by the host's pip, kept in the root as deps/$key"
  else
    echo "kept in the root: deps/$key ($(ls "$keep/$key" | grep -c 'dist-info$') distributions)"
  fi
  cp -a "$keep/$key/." "$site/"
}

# Shared by both roots: a venv, made once per root and copied fresh for every run; pip runs as
# `venv/bin/python -m pip`, so the copy needs no rewritten scripts. The root's Python makes it
# without pip (`venv --without-pip`, seconds under qemu); the host unpacks into it the pip wheel
# the root's ensurepip would have installed (/usr/share/python-wheels, pure Python) and
# byte-compiles it (ensurepip under qemu took 2m24s / 2m29s per cold root at load 7-9).
venv_once() {  # venv_once <arch>: the root's kept venv, then a fresh copy of it in /iiidir/venv
  local dir=$CACHE/$1 keep=/var/lib/iiidir/venv
  if [ ! -f "$dir$keep/.complete" ]; then
    rm -rf "$dir$keep"
    inroot "$1" "python3 -m venv --without-pip $keep" || return 1
    python3 -m pip install -q --no-deps --no-index --no-compile --target "$dir$keep/lib/python3.11/site-packages" \
      "$dir"/usr/share/python-wheels/pip-*.whl >"$WORK/venv-$1.log" 2>&1 || { tail -20 "$WORK/venv-$1.log"; return 1; }
    rm -rf "$dir$keep/lib/python3.11/site-packages/bin"
    compile_for_root "$dir" "$keep/lib/python3.11/site-packages" || return 1
    touch "$dir$keep/.complete"
  fi
  inroot "$1" "cp -a $keep venv; echo \"\$(python3 -V), \$(uname -m)\""
}
# Our wheel, cross-compiled on the host: the sdist unpacked, `setup.py bdist_wheel` run by the
# host's Python with Debian's cross gcc, the root's Python headers (the multiarch pyconfig.h
# through -idirafter, so the cross toolchain's own libc headers come first) and the root's
# sysconfig (_PYTHON_SYSCONFIGDATA_NAME), tagged for the root (_PYTHON_HOST_PLATFORM). Under qemu
# the same compile took 3-18 minutes per root; natively it takes well under one.
cross_build() {  # cross_build <arch> <sdist> <wheel dir>: the sdist's wheel for the root's platform
  local arch=$1 sdist=$2 out=$3 dir=$CACHE/$1 triplet=${TRIPLET[$1]} src
  src=$(mktemp -d "$WORK/cross-$arch.XXXX") && mkdir -p "$src/sysconfig" "$out"
  cp "$dir/usr/lib/python3.11/_sysconfigdata__linux_$triplet.py" "$src/sysconfig/"
  tar -xzf "$sdist" -C "$src"
  (cd "$(ls -d "$src"/*/setup.py | head -1 | xargs dirname)" && env ${ROOT_ENV[$arch]} _PYTHON_HOST_PLATFORM="linux-${MACHINE[$arch]}" \
     _PYTHON_SYSCONFIGDATA_NAME="_sysconfigdata__linux_$triplet" PYTHONPATH="$src/sysconfig" \
     CC="$triplet-gcc" LDSHARED="$triplet-gcc -shared" \
     CFLAGS="-O3 -g0 -I$dir/usr/include/python3.11 -idirafter $dir/usr/include" \
     "$VENV_PY" setup.py -q bdist_wheel -d "$out")
}
cross_wheel() {  # cross_wheel <arch>: our abi3 wheel for the root's platform, into <root>/iiidir/wheels
  local arch=$1 dir=$CACHE/$1 triplet=${TRIPLET[$1]} machine=${MACHINE[$1]} src=$WORK/cross-$1 whl so
  rm -rf "$src" && mkdir -p "$src"
  cross_build "$arch" "$SDIST" "$dir/iiidir/wheels" >"$WORK/cross-$arch.log" 2>&1 \
    || { tail -30 "$WORK/cross-$arch.log"; return 1; }
  whl=$(ls "$dir"/iiidir/wheels/iii_directory-*.whl)
  case "$whl" in *-cp311-abi3-linux_$machine.whl) echo "$(basename "$whl")";; *) echo "unexpected wheel: $whl"; return 1;; esac
  mkdir -p "$src/unpacked" && (cd "$src/unpacked" && "$VENV_PY" -m zipfile -e "$whl" .)
  for so in _rank/_core.abi3.so _rank/_static.abi3.so; do
    [ -f "$src/unpacked/$so" ] || { echo "the wheel lacks $so"; return 1; }
    "$triplet-readelf" -h "$src/unpacked/$so" | grep -q "Machine: *${ELF_MACHINE[$arch]}\$" \
      || { "$triplet-readelf" -h "$src/unpacked/$so"; echo "$so is not an ${ELF_MACHINE[$arch]} ELF"; return 1; }
    echo "$so: $("$triplet-readelf" -h "$src/unpacked/$so" | sed -n 's/^ *Class: *//p') ${ELF_MACHINE[$arch]}, $(stat -c %s "$src/unpacked/$so") bytes"
  done
}
# Our own wheel goes in by the root's pip (its console script, its record); its dependencies are in.
OWN='venv/bin/python -m pip install -q --no-deps --no-index --no-compile --force-reinstall wheels/iii_directory-*.whl'
install_own() {  # install_own <arch>: our wheel by the root's pip, byte-compiled by the host
  inroot "$1" "$OWN" && compile_for_root "$CACHE/$1" /iiidir/venv/lib/python3.11/site-packages/iii_directory \
    && compile_for_root "$CACHE/$1" /iiidir/venv/lib/python3.11/site-packages/_rank
}
SMOKE='smoke() {  # smoke <mode>: the README main-job command over the shipped example catalog
  local cli=/iiidir/venv/bin/iii-directory
  [ "$1" = hybrid ] && cli="/iiidir/venv/bin/python /iiidir/cli_under_qemu.py"
  (cd /tmp && $cli call directory::search_functions \
    "{\"capabilities\": [\"send an email to a customer\", \"store a file and share a download link\"]}") \
    >/iiidir/call.json 2>/iiidir/call.err || { cat /iiidir/call.err; return 1; }
  venv/bin/python - "$1" <<PY
import json, sys
r = json.load(open("/iiidir/call.json"))
ids = [f["function_id"] for w in r["workers"] for f in w["functions"]]
assert r["search_mode"] == sys.argv[1], (r["search_mode"], open("/iiidir/call.err").read()[-2000:])
assert "mailer::send" in ids and "drive::share-link" in ids, ids
print("search_mode:", r["search_mode"], "top:", ids[:4])
PY
}'
# Collected under emulation: the folders of the `_rank` core, search and the surfaces (one module
# per surface in iii_directory.functions); the markers pick the tests in them, so new tests there
# join by themselves. Left out: the source-tree checks (test_layering reads src/, absent here),
# the CLI/config shell, protocol, UI and hook folders.
TESTS='tests() {  # tests <marker expression> <folders…>: the copied tests against the installed package
  local marker=$1; shift
  # --timeout: pyproject'"'"'s 120 s per test is sized for a native CPU; qemu runs the encoder ~20x slower
  (cd project && RANK_IMPLEMENTATION=cython /iiidir/venv/bin/python -m pytest -q -p no:cacheprovider \
     --timeout=900 --durations=5 -m "$marker" "${@/#/tests/unit/}")
}'
CHECK_ARMV7='venv/bin/python - <<PY
import importlib.metadata as md, importlib.util as u, _rank
a = _rank.available(); print(a)
assert a["compiled"] and a["implementation"] == "cython", a
assert not a["dense"], a
heavy = [r for r in md.requires("iii-directory") or [] if r.split()[0].split(";")[0] in ("numpy", "onnxruntime")]
assert not heavy, heavy
assert u.find_spec("numpy") is None and u.find_spec("onnxruntime") is None, "numpy/onnxruntime installed"
print("metadata: no numpy/onnxruntime required or installed")
PY'
CHECK_AARCH64='venv/bin/python -c "import _rank; a = _rank.available(); print(a); assert a[\"compiled\"] and a[\"dense\"], a"'

# onnxruntime 1.28 and later crash (SIGSEGV) under qemu-aarch64 7.2 (Debian bookworm's qemu-user)
# when first imported from a thread other than the main one, which is how the worker opens its
# encoder; 1.27 does not. The emulated aarch64 root therefore takes onnxruntime<1.28 (still a
# binary wheel from PyPI); real aarch64 hosts get the newest release.
printf 'onnxruntime<1.28\n' >"$WORK/qemu-aarch64-constraints.txt"
declare -A MACHINE=([armhf]=armv7l [arm64]=aarch64)
declare -A TRIPLET=([armhf]=arm-linux-gnueabihf [arm64]=aarch64-linux-gnu)
declare -A ELF_MACHINE=([armhf]=ARM [arm64]=AArch64)
# QEMU_CPU: qemu-user's default `max` CPU advertises SVE/SME, and onnxruntime 1.27 then takes
# kernels that qemu emulates ~10x slower (8 texts: 124 s against 12.3 s as a Cortex-A72, the
# Raspberry Pi 4's core, 2 Dec 21:27 UTC on this host; the dense tests hit their 900 s timeout).
# A Cortex-A72 is also the smallest real board the aarch64 wheel is for.
declare -A ROOT_ENV=([armhf]="IIIDIR_LANES=lexical RANK_REQUIRE_NATIVE=1" [arm64]="RANK_REQUIRE_NATIVE=1 QEMU_CPU=cortex-a72")
declare -A EXTRA=([armhf]="" [arm64]="-c $WORK/qemu-aarch64-constraints.txt")
declare -A EXTRA_FILES=([armhf]="" [arm64]="$WORK/qemu-aarch64-constraints.txt")

cpu_of() {  # cpu_of <file>: the children's CPU seconds (user + system) in the output of `times`
  awk 'NR == 2 { s = 0; for (i = 1; i <= NF; i++) { split($i, p, "m"); s += p[1] * 60 + p[2] } printf "%d", s }' "$1"
}
step() {  # step <arch> <label> <command…>: run and record its wall time and its CPU time
  local arch=$1 label=$2 t s c f=$WORK/cpu-$BASHPID
  shift 2
  # `times` in this shell (a $(...) subshell has no children of its own): waited-for children
  times >"$f"; t=$(date +%s) c=$(cpu_of "$f")
  echo "-- [$arch] $label"
  "$@" || { echo "[$arch] step '$label' failed"; return 1; }
  times >"$f"; s=$(( $(date +%s) - t )) c=$(( $(cpu_of "$f") - c ))
  printf '[%s] %-60s %dm%02ds (cpu %dm%02ds, load %s)\n' "${MACHINE[$arch]}" "$label" $((s / 60)) $((s % 60)) \
    $((c / 60)) $((c % 60)) "$(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$WORK/times-$arch"
}

run_arch() {  # run_arch <debian arch>: prepare its root, build, install, check, test
  local arch=$1 t
  t=$(date +%s)
  MACHINE_NAME_OF=${MACHINE[$arch]}
  prepare "$arch"
  step "$arch" "fresh venv (qemu venv --without-pip, host pip)" venv_once "$arch" || return 1
  step "$arch" "wheel from the sdist (host: cython + ${TRIPLET[$arch]}-gcc)" cross_wheel "$arch" || return 1
  local wheel
  wheel=$(ls "$CACHE/$arch"/iiidir/wheels/iii_directory-*.whl)
  case "$arch" in
    armhf)
      step "$arch" "dependencies of wheel[dense] (BM25-only) + test deps (host pip)" deps "$arch" "$wheel" dense $TEST_DEPS || return 1
      step "$arch" "install the wheel (qemu pip --no-deps)" install_own "$arch" || return 1
      step "$arch" "_rank.available(), metadata (qemu)" inroot "$arch" "$CHECK_ARMV7" || return 1
      step "$arch" "README main-job command, lexical (qemu)" inroot "$arch" "$SMOKE; smoke lexical" || return 1
      step "$arch" "pytest -m portable (qemu)" inroot "$arch" "$TESTS; tests portable rank search skills prompts agents kits downloads registry" || return 1;;
    arm64)
      step "$arch" "dependencies of wheel[dense], binary only + test deps (host pip)" deps "$arch" "$wheel" dense ${EXTRA[$arch]} $TEST_DEPS || return 1
      step "$arch" "install the wheel (qemu pip --no-deps)" install_own "$arch" || return 1
      step "$arch" "_rank.available() (qemu)" inroot "$arch" "$CHECK_AARCH64" || return 1
      # The hybrid call runs beside the tests (they never read the root's vector cache): on a
      # fresh root it embeds the catalog's 89 documents, ~2 s of CPU each under qemu.
      local smoke
      ( step "$arch" "directory::search_functions, hybrid (qemu, beside the tests)" inroot "$arch" "$SMOKE; smoke hybrid" || exit 1 ) \
        >"$WORK/smoke-$arch.log" 2>&1 & smoke=$!
      step "$arch" "pytest -m \"rank or dense\" (qemu)" inroot "$arch" "$TESTS; tests \"rank or dense\" rank search" \
        || { kill "$smoke" 2>/dev/null; wait "$smoke"; cat "$WORK/smoke-$arch.log"; return 1; }
      wait "$smoke" || { cat "$WORK/smoke-$arch.log"; return 1; }
      cat "$WORK/smoke-$arch.log";;
    *) echo "no script for $arch"; return 2;;
  esac
  echo "[$arch] done in $(elapsed "$t")"
}
say "4. $ARCHES in parallel (armhf: armv7 BM25-only; arm64: aarch64 with the dense extra)"
declare -A PIDS
for arch in $ARCHES; do ( run_arch "$arch" ) >"$WORK/$arch.log" 2>&1 & PIDS[$arch]=$!; done
failed=""
for arch in $ARCHES; do wait "${PIDS[$arch]}" || failed="$failed $arch"; done
for arch in $ARCHES; do say "log: $arch"; cat "$WORK/$arch.log"; done
say "step times (the two roots ran side by side)"
for arch in $ARCHES; do cat "$WORK/times-$arch" 2>/dev/null || true; done
[ -z "$failed" ] || fail "emulated stage failed for:$failed"
echo "emulated ARM stage passed in $(elapsed "$START")"
