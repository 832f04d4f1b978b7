#!/usr/bin/env bash
# Preflight: the system packages of tools/setup/system-packages.txt are there, or are installed now, or we stop in
# the first second with the one command that installs them. `.ci/run`, the pull-request workflow, `npm test` and
# `npm start` run it first, so a fresh machine fails here and not minutes later in Playwright's "Failed to launch".
# It owns finding and installing those packages; it does not check Node or npm (package.json `engines` says which
# Node) nor the lock (tools/setup/lock-check.ts).
#
# Bash and only its builtins until it installs: it runs before `npm ci` (no tsx yet) and its test runs it with a
# PATH that holds none of the tools. PEDELEC_PREFLIGHT_NO_INSTALL=1 makes it report instead of installing.
set -uo pipefail

list="${BASH_SOURCE[0]%/*}/system-packages.txt"
missing=()  # Debian packages to install
reasons=()  # one line per missing package: what looked for it and why we need it

# The command to run again, as the user typed it (npm names the script it runs in npm_lifecycle_event).
again() {
  case ${npm_lifecycle_event:-test} in
    test | start) echo "npm ${npm_lifecycle_event:-test}" ;;
    *) echo "npm run $npm_lifecycle_event" ;;
  esac
}

# Chromium is `$CHROMIUM` when set (the suites launch that one), else Debian's /usr/bin/chromium.
present() {
  local pkg=$1 cmd=$2
  if [[ $pkg == chromium && -n ${CHROMIUM:-} ]]; then cmd=$CHROMIUM; fi
  if [[ $cmd == /* ]]; then [[ -f $cmd && -x $cmd ]]; else command -v "$cmd" >/dev/null 2>&1; fi
}

check_all() {
  missing=() reasons=()
  local pkg cmd why
  while read -r pkg cmd why; do
    if [[ -z $pkg || $pkg == \#* ]]; then continue; fi
    if present "$pkg" "$cmd"; then continue; fi
    missing+=("$pkg")
    reasons+=("  $pkg (looked for $cmd): $why")
  done <"$list"
}

# A CHROMIUM that points nowhere is the user's choice: installing Debian's would not change what the suites launch.
check_chromium_override() {
  if [[ -z ${CHROMIUM:-} ]] || [[ -f $CHROMIUM && -x $CHROMIUM ]]; then return 0; fi
  echo "preflight: CHROMIUM=$CHROMIUM is not an executable file." >&2
  echo "  Point it at a Chromium (CHROMIUM=/path/to/chromium $(again)), or unset it to use /usr/bin/chromium." >&2
  exit 1
}

# Prints the command prefix that may install ("" as root, "sudo -n" with passwordless sudo), or fails with why not.
installer() {
  if [[ ${PEDELEC_PREFLIGHT_NO_INSTALL:-} == 1 ]]; then echo "PEDELEC_PREFLIGHT_NO_INSTALL=1 is set"; return 1; fi
  if ! command -v apt-get >/dev/null 2>&1; then echo "there is no apt-get here"; return 1; fi
  if [[ $EUID -eq 0 ]]; then echo ""; return 0; fi
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then echo "sudo -n"; return 0; fi
  echo "this user is not root and has no passwordless sudo"
  return 1
}

install_missing() {
  local prefix=$1
  echo "preflight: installing ${missing[*]} (apt-get, a minute or two)" >&2
  # shellcheck disable=SC2086 # the prefix is "" or "sudo -n", split on purpose
  $prefix apt-get update -qq &&
    $prefix env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

give_up() {
  local why=$1
  echo "preflight: missing system packages; the tests and npm start need them:" >&2
  printf '%s\n' "${reasons[@]}" >&2
  echo "preflight: not installing them ($why). Install them with:" >&2
  echo "  sudo apt-get install -y ${missing[*]}" >&2
  echo "  (or your system's package manager), then run \`$(again)\` again." >&2
  echo "  To use a Chromium elsewhere, point CHROMIUM at it: CHROMIUM=/path/to/chromium $(again)" >&2
  exit 1
}

main() {
  check_chromium_override
  check_all
  if ((${#missing[@]} == 0)); then return 0; fi
  local prefix
  if ! prefix=$(installer); then give_up "$prefix"; fi
  if ! install_missing "$prefix"; then give_up "apt-get failed; see above"; fi
  check_all
  if ((${#missing[@]} > 0)); then give_up "apt-get ran but they are still missing"; fi
  echo "preflight: installed; all system packages present" >&2
}

main
