#!/bin/bash
# Fetches the five suites of tools/suites/run.sh at their release tags into
# ROOT and builds what they need: npm packages for express and ws (from the
# npm registry), curl and libuv with cmake (Debian's cmake, perl,
# libssl-dev; -j2). Needs GitHub (git clone) unless ROOT already holds the
# checkouts; a checkout that is there is kept as it is.
#
#   tools/suites/prepare.sh ROOT
set -eu

[ $# -eq 1 ] || { echo "usage: $0 ROOT" >&2; exit 2; }
mkdir -p "$1"
ROOT=$(cd "$1" && pwd)
cd "$ROOT"

get() {
	local name=$1 url=$2 tag=$3
	[ -d "$name" ] || git -c advice.detachedHead=false clone -q --depth 1 --branch "$tag" "$url" "$name"
}
get tornado https://github.com/tornadoweb/tornado v6.5.7
get express https://github.com/expressjs/express v5.2.1
get ws https://github.com/websockets/ws 8.21.0
get curl https://github.com/curl/curl curl-8_21_0
get libuv https://github.com/libuv/libuv v1.52.1

# tornado runs from its tree with the system python3 (its optional
# speedups, pycurl, pycares and twisted are skipped by its own runner).
for n in express ws; do
	[ -d "$n/node_modules" ] || (cd "$n" && npm install --no-audit --no-fund)
done
if [ ! -x libuv-build/uv_run_tests_a ]; then
	cmake -S libuv -B libuv-build -DBUILD_TESTING=ON -DCMAKE_BUILD_TYPE=Release
	cmake --build libuv-build -j2
fi
if [ ! -x curl-build/src/curl ]; then
	cmake -S curl -B curl-build -DCMAKE_BUILD_TYPE=Release -DCURL_USE_OPENSSL=ON -DCURL_USE_LIBPSL=OFF \
		-DUSE_NGHTTP2=OFF -DCURL_USE_LIBSSH2=OFF -DUSE_LIBIDN2=OFF -DCURL_BROTLI=OFF -DCURL_ZSTD=OFF \
		-DBUILD_TESTING=ON
	cmake --build curl-build -j2
	cmake --build curl-build -j2 --target testdeps
fi
echo "ready: tools/suites/run.sh $ROOT"
