#!/bin/sh
# deps.sh PACKAGE...: installs the Debian packages that are missing.
# As root it runs apt-get (updating the package lists first); otherwise it
# names the command to run and fails.
set -eu
missing=""
for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
    echo "cnntop: missing Debian packages:$missing" >&2
    echo "cnntop: install them with: sudo apt-get install$missing" >&2
    exit 1
fi
echo "cnntop: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing >/dev/null
