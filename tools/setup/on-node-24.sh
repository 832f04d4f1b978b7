#!/usr/bin/env bash
# The runtime parts on Node 24: the Core, pedelec-cli and native-host suites (fresh, not from Nx's cache) and the
# self-test, run by Node 24 from npm's `node` package through npx, so it is never in package-lock.json. `.ci/run`
# runs it after `npm test` (which ran everything on the machine's Node), the pull-request workflow after its
# affected run. It owns the version and the list; it does not install system packages (preflight.sh) or node_modules.
set -euo pipefail
cd "${BASH_SOURCE[0]%/*}/../.."

NODE_VERSION=24.21.0

# An npx cache of its own, readable by all: as root, a CLI suite runs the CLI as `nobody` through this Node, which
# cannot reach a Node under root's own 0700 home (EACCES on spawn).
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
chmod 755 "$cache"

npm_config_cache=$cache npx --yes -p "node@$NODE_VERSION" -- bash -c '
  set -euo pipefail
  echo "on-node-24: node $(node --version)"
  npx nx run-many -t test -p core-daemon,cli,native-host --skip-nx-cache
  npm start -- --self-test'
