#!/usr/bin/env bash
# Make sure the Debian packages a make target needs are here.
#
#   tools/need.sh [--optional] "what needs them" CHECK:PACKAGE ...
#
# CHECK is a command on PATH or an absolute path; each missing one's PACKAGE is installed with
# apt-get when run as root (after an apt-get update when the package lists lack it). Otherwise
# the missing packages are named and the target stops, or, with --optional, goes on without
# them (the target has a fallback).
set -euo pipefail
optional=0
if [ "${1:-}" = "--optional" ]; then optional=1; shift; fi
purpose="$1"; shift
missing=""
for pair in "$@"; do
  check="${pair%%:*}"; package="${pair#*:}"
  if [ "${check#/}" != "$check" ]; then [ -e "$check" ] && continue
  else command -v "$check" >/dev/null && continue; fi
  case " $missing " in *" $package "*) ;; *) missing="$missing $package";; esac
done
[ -z "$missing" ] && exit 0
# Another apt-get (a second make target, unattended upgrades) may hold dpkg's lock: wait for it.
# A machine whose package lists were never fetched, or are stale, knows none or old versions of
# the packages: fetch them once and try again.
apt_install() {
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=900 "$@" >/dev/null
}
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing for $purpose:$missing" >&2
  if apt_install $missing; then exit 0; fi
  echo "apt-get update, then installing again:$missing" >&2
  if apt-get update -q -o DPkg::Lock::Timeout=900 >/dev/null && apt_install $missing; then exit 0; fi
  echo "apt-get could not install:$missing" >&2
fi
if [ "$optional" = 1 ]; then
  echo "note: $purpose goes on without the Debian packages:$missing" >&2; exit 0
fi
echo "error: $purpose needs the Debian packages:$missing (apt-get install as root)" >&2
exit 1
