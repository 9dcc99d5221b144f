#!/usr/bin/env bash
# Make sure the Debian packages a make target needs are here.
#
#   tools/need.sh [--optional] "what needs them" CHECK:PACKAGE ...
#
# CHECK is a command on PATH or an absolute path; each missing one's PACKAGE is installed with
# apt-get when run as root. Otherwise the missing packages are named and the target stops, or,
# with --optional, goes on without them (the target has a fallback).
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
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing for $purpose:$missing" >&2
  if DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing >/dev/null; then exit 0; fi
  echo "apt-get could not install:$missing" >&2
fi
if [ "$optional" = 1 ]; then
  echo "note: $purpose goes on without the Debian packages:$missing" >&2; exit 0
fi
echo "error: $purpose needs the Debian packages:$missing (apt-get install as root)" >&2
exit 1
