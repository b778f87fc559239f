#!/usr/bin/env bash
# Install what the browser click-through needs (idempotent): Debian's chromium, the npm packages
# of tests/ui (React for the harness import map, esbuild, playwright-core) and the vendor bundle.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = "0" ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium
  else
    echo "tests/ui/setup.sh: /usr/bin/chromium is missing and this user cannot apt-get install it" >&2
  fi
fi
if ! command -v node >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm
  else
    echo "tests/ui/setup.sh: node is missing" >&2
    exit 1
  fi
fi
if [ ! -d "$here/node_modules/playwright-core" ] || [ "$here/package-lock.json" -nt "$here/node_modules/.package-lock.json" ]; then
  npm ci --prefix "$here" --no-audit --no-fund
fi
node "$here/harness/build-vendor.mjs"
