#!/bin/sh
# Make sure the real services the scale-out tests and benchmark start are installed: redis-server and
# nginx (Debian packages). Installs only what is missing; starts nothing (the tests start their own
# instances on ephemeral loopback ports with configuration in a temporary directory).
set -eu

missing=""
command -v redis-server >/dev/null 2>&1 || missing="$missing redis-server"
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing="$missing nginx"
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
    run=""
elif command -v sudo >/dev/null 2>&1; then
    run="sudo"
else
    echo "ensure_services: need root (or sudo) to install:$missing" >&2
    exit 1
fi
echo "ensure_services: installing$missing" >&2
$run env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
# shellcheck disable=SC2086  # word splitting of the package list is intended
$run env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing >/dev/null
command -v redis-server >/dev/null 2>&1 && { command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]; } || {
    echo "ensure_services: installation did not provide redis-server and nginx" >&2
    exit 1
}
