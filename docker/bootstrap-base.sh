#!/usr/bin/env bash
# Make the base image debian:bookworm-slim on a machine that cannot reach a registry (an
# air-gapped course server): debootstrap a minimal bookworm root from the Debian mirror (or a
# local one, MIRROR=...) and `docker import` it under the tag the Dockerfile starts FROM.
# Idempotent: does nothing when the tag already exists. Needs root, docker and debootstrap
# (`apt-get install -y debootstrap`). About 30 s.
set -euo pipefail
TAG=${TAG:-debian:bookworm-slim}
MIRROR=${MIRROR:-http://deb.debian.org/debian}

if docker image inspect "$TAG" >/dev/null 2>&1; then
    echo "base image $TAG already present"
    exit 0
fi
command -v debootstrap >/dev/null || { echo "error: needs debootstrap (apt-get install -y debootstrap)" >&2; exit 2; }
root=$(mktemp -d /tmp/bookworm-root.XXXXXX)
trap 'rm -rf "$root"' EXIT
# minbase: essential + apt only, the same set as the registry's -slim image (no docs trimming)
debootstrap --variant=minbase bookworm "$root" "$MIRROR" >/dev/null
# what the registry's -slim image also leaves out: the downloaded .debs (~60 MB), apt lists,
# docs, man pages and translations
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb \
       "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/locale/*
tar -C "$root" -c . | docker import - "$TAG" >/dev/null
echo "base image $TAG imported ($(docker image inspect -f '{{.Size}}' "$TAG") bytes)"
