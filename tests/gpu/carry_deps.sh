#!/bin/sh
# Packs what the build needs beyond a compiler, CMake and Python -- cJSON,
# libyaml, hwloc, cmocka and pkg-config -- into .deps/ at the repository
# root, for a lent GPU machine where nothing can be installed and only the
# working tree plus named git-ignored folders travel (docs/gpu.md, "Running
# on a lent GPU machine"). There: `. .deps/env.sh` from the repository
# root, then build with -DMB_WITH_ONEDNN=OFF -DMB_WITH_HIP=OFF.
#
# Run here (Debian 12, amd64, apt lists present), as root or not: Debian's
# packages are fetched with `apt-get download` and unpacked with `dpkg -x`;
# nothing is installed. Idempotent: when .deps/ already holds the packages
# apt would fetch now, only .deps/commit is rewritten -- run it right before
# each device call, since that file names the tree that travels.
set -eu
cd "$(dirname "$0")/../.."
root=$(pwd -P)
deps=$root/.deps
triplet=x86_64-linux-gnu

# The -dev packages, the libraries they link to (their runtime packages),
# and pkg-config (pkgconf's binary and library: CMake finds every one of the
# four through pkg-config, and the GPU image may have none).
packages="libcjson-dev libcjson1 libyaml-dev libyaml-0-2 libhwloc-dev
libhwloc15 libcmocka-dev libcmocka0 pkgconf-bin libpkgconf3"
# libhwloc.so.15 also needs libudev.so.1, which an Ubuntu 24.04 image has
# wherever apt is (libapt-pkg links it), but an image without apt need not:
# it goes to .deps/fallback/, which env.sh puts on the library path only
# where the system lacks the file (Debian's older copy must not shadow the
# system's own).
fallback_packages="libudev1"
# What every glibc system has; any other NEEDED entry must be carried.
system_libs="libc.so.6 libm.so.6 ld-linux-x86-64.so.2"

die() { echo "carry_deps: $*" >&2; exit 1; }

[ "$(dpkg --print-architecture)" = amd64 ] ||
  die "the GPU machine is x86_64: run this on an amd64 Debian"
for tool in apt-get dpkg objdump git; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool is needed (apt-get install binutils git)"
done

# The .deb files apt would fetch now, by name (no download: the apt lists).
# shellcheck disable=SC2086 # the package lists are split on purpose
wanted=$(apt-get download --print-uris $packages $fallback_packages |
         awk '{print $2}' | sort) ||
  die "apt-get cannot name the packages (run apt-get update)"
[ -n "$wanted" ] || die "apt-get named no package (run apt-get update)"

if [ -f "$deps/packages" ] && [ "$(cat "$deps/packages")" = "$wanted" ]; then
  echo "carry_deps: .deps/ already holds these packages"
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/carry_deps.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  # apt downloads as its unprivileged _apt user, which must write here.
  chmod 0755 "$work" && mkdir "$work/debs" && chmod 0777 "$work/debs"
  # shellcheck disable=SC2086
  (cd "$work/debs" && apt-get download -q $packages $fallback_packages) ||
    die "apt-get download failed (run apt-get update)"
  new=$work/deps
  mkdir -p "$new/fallback"
  for deb in "$work"/debs/*.deb; do
    name=$(dpkg-deb -f "$deb" Package)
    case " $fallback_packages " in
      *" $name "*) dpkg -x "$deb" "$work/fallback-root"
                   cp -L "$work/fallback-root/usr/lib/$triplet/libudev.so.1" "$new/fallback/" ;;
      *)           dpkg -x "$deb" "$new" ;;
    esac
  done
  lib=$new/usr/lib/$triplet

  # Only what a build reads: no documentation, static archives or CMake
  # package files (the project finds these libraries through pkg-config, and
  # those files name /usr).
  rm -rf "${new:?}/usr/share" "$lib/cmake" "$new/usr/lib/pkgconfig"
  rm -f "$lib"/*.a
  # hwloc puts its generated config.h under the multiarch include directory,
  # which the compiler searches only below /usr: merge it into include/.
  if [ -d "$new/usr/include/$triplet" ]; then
    cp -R "$new/usr/include/$triplet/." "$new/usr/include/"
    rm -rf "$new/usr/include/$triplet"
  fi
  # No symbolic links: whether a link survives the trip is not ours to
  # know. Each link becomes a copy of its file; then a library file is kept
  # only under the names the linker (lib*.so) and the loader (its SONAME)
  # ask for.
  find "$new" -type l | while read -r link; do
    cp -L "$link" "$link.copy" && rm "$link" && mv "$link.copy" "$link"
  done
  for so in "$lib"/*.so.*; do
    soname=$(objdump -p "$so" | awk '$1 == "SONAME" {print $2}')
    [ "$(basename "$so")" = "$soname" ] || rm "$so"
  done
  # pkg-config finds its library beside it without LD_LIBRARY_PATH, which
  # the installed-tree test clears.
  cat > "$new/usr/bin/pkg-config" <<'WRAPPER'
#!/bin/sh
# pkgconf, with the library that travelled beside it (tests/gpu/carry_deps.sh)
here=$(dirname "$0")
LD_LIBRARY_PATH="$here/../lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  exec "$here/pkgconf" "$@"
WRAPPER
  chmod 0755 "$new/usr/bin/pkg-config"

  # The .pc files say /usr; make them relative to where they lie
  # (${pcfiledir} is .deps/usr/lib/<triplet>/pkgconfig), so .deps/ works
  # wherever the tree is checked out.
  # shellcheck disable=SC2016 # ${pcfiledir} is pkg-config's, not ours
  up='${pcfiledir}/../../..'
  for pc in "$lib"/pkgconfig/*.pc; do
    sed -e "s#=/usr\$#=$up#" -e "s#=/usr/#=$up/#" \
        -e "s#-I/usr/#-I$up/#g" -e "s#-L/usr/#-L$up/#g" "$pc" > "$pc.new"
    mv "$pc.new" "$pc"
    ! grep -n '/usr' "$pc" || die "$pc still names /usr"
  done

  # Every library a carried binary needs is carried or is glibc's.
  for elf in "$lib"/*.so* "$new/usr/bin/pkgconf" "$new"/fallback/*; do
    for needed in $(objdump -p "$elf" | awk '$1 == "NEEDED" {print $2}'); do
      case " $system_libs " in *" $needed "*) continue ;; esac
      [ -e "$lib/$needed" ] || [ -e "$new/fallback/$needed" ] ||
        die "$(basename "$elf") needs $needed, which is not carried"
    done
  done

  echo "$wanted" > "$new/packages"
  rm -rf "$deps"
  mv "$new" "$deps"
fi

# Sourced on the GPU machine from the repository root (the path of a sourced
# file is not known to POSIX sh, hence $PWD or MB_DEPS_DIR).
cat > "$deps/env.sh" <<'EOF'
# Written by tests/gpu/carry_deps.sh. Source it from the repository root
# (". .deps/env.sh") to build against the carried libraries and nothing
# else: pkg-config is the carried one and reads only the carried .pc files;
# the loader (and the linker, for the libraries those link) find the
# carried libraries first.
mb_deps=${MB_DEPS_DIR:-$PWD/.deps}
if [ ! -f "$mb_deps/usr/bin/pkg-config" ]; then
  echo "env.sh: no carried pkg-config under $mb_deps: source this file from the repository root, or set MB_DEPS_DIR" >&2
  unset mb_deps
  return 1
fi
mb_deps=$(cd "$mb_deps" && pwd -P)
# In case the trip lost the files' modes.
if [ ! -x "$mb_deps/usr/bin/pkgconf" ] || [ ! -x "$mb_deps/usr/bin/pkg-config" ]; then
  chmod 0755 "$mb_deps/usr/bin/pkgconf" "$mb_deps/usr/bin/pkg-config"
fi
export PKG_CONFIG="$mb_deps/usr/bin/pkg-config"
export PKG_CONFIG_LIBDIR="$mb_deps/usr/lib/x86_64-linux-gnu/pkgconfig"
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
case ":$PATH:" in
  *":$mb_deps/usr/bin:"*) ;;
  *) export PATH="$mb_deps/usr/bin:$PATH" ;;
esac
mb_deps_libs="$mb_deps/usr/lib/x86_64-linux-gnu"
# The carried libudev only where the system has none: Debian's older copy
# must not shadow the system's own.
mb_deps_udev=
for mb_deps_dir in /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu /usr/lib64 /lib64; do
  [ -e "$mb_deps_dir/libudev.so.1" ] && mb_deps_udev=system
done
[ -n "$mb_deps_udev" ] || mb_deps_libs="$mb_deps_libs:$mb_deps/fallback"
case ":${LD_LIBRARY_PATH:-}:" in
  *":$mb_deps/usr/lib/x86_64-linux-gnu:"*) ;;
  *) export LD_LIBRARY_PATH="$mb_deps_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;;
esac
unset mb_deps mb_deps_libs mb_deps_udev mb_deps_dir
EOF

# The tree that travels has no .git: name its commit here. Dirty means
# uncommitted changes to tracked files, as the library's own commit string
# says; the hash of that diff tells two dirty trees apart. Sourceable.
head=$(git rev-parse HEAD)
changed=$(git status --porcelain --untracked-files=no)
untracked=$(git ls-files --others --exclude-standard | wc -l)
{
  echo "# Written by tests/gpu/carry_deps.sh: the source tree that travelled."
  echo "MB_SOURCE_COMMIT=$head"
  if [ -n "$changed" ]; then
    echo "MB_SOURCE_DIRTY=yes"
    echo "MB_SOURCE_DIFF_SHA256=$(git diff HEAD | sha256sum | cut -d' ' -f1)"
  else
    echo "MB_SOURCE_DIRTY=no"
  fi
  echo "MB_SOURCE_UNTRACKED_FILES=$untracked"
  echo "MB_SOURCE_WRITTEN=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  [ -z "$changed" ] || echo "$changed" | sed 's/^/# changed: /'
} > "$deps/commit"

# The carried pkg-config must name the carried files, and only those.
flags=$(MB_DEPS_DIR=$deps sh -c '. "$MB_DEPS_DIR/env.sh" &&
        pkg-config --cflags --libs libcjson hwloc yaml-0.1 cmocka') ||
  die "the carried pkg-config cannot resolve the carried .pc files"
for flag in $flags; do
  case $flag in
    -I*) [ -d "${flag#-I}" ] || die "pkg-config names a missing directory: $flag" ;;
    -L*) [ -d "${flag#-L}" ] || die "pkg-config names a missing directory: $flag" ;;
  esac
  case $flag in -I/usr/*|-L/usr/*) die "pkg-config names a system path: $flag" ;; esac
done
[ -z "$(find "$deps" -type l)" ] || die "symbolic links left in .deps/"
echo "carry_deps: .deps/ is $(du -sh "$deps" | cut -f1) ($(wc -l < "$deps/packages") packages);" \
  "commit $(echo "$head" | cut -c1-12)$([ -z "$changed" ] || echo ' (dirty)')"
