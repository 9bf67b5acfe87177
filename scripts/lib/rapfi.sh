# shellcheck shell=bash
# Sourced by scripts/anchors.sh and scripts/rapfi-onnx.sh: Rapfi's source and its build, the
# same for both. The caller defines die MESSAGE... and log MESSAGE..., and sets REPO_URL and REF
# (the repository and commit to fetch when no local checkout is given).

# rapfi_fetch DIR: makes DIR a checkout of $REPO_URL at $REF (fetched only when it is not one
# already).
rapfi_fetch() {
    local dir=$1
    command -v git >/dev/null || die "git is not installed; give a local checkout with --src DIR"
    if [ "$(git -C "$dir" rev-parse HEAD 2>/dev/null || true)" != "$REF" ]; then
        log "fetching $REPO_URL at $REF"
        rm -rf "$dir"
        git init -q "$dir"
        git -C "$dir" fetch -q --depth 1 "$REPO_URL" "$REF" \
            || { rm -rf "$dir"; die "cannot fetch $REPO_URL at $REF (offline?); give a local checkout with --src DIR"; }
        git -C "$dir" checkout -q FETCH_HEAD
    fi
}

# rapfi_locate SRC: sets CMAKE_DIR to the folder of Rapfi's CMakeLists.txt in the checkout (or
# unpacked archive) SRC, or its Rapfi/ folder, and VERSION, MAJOR, MINOR to the version its
# core/version.cpp declares.
rapfi_locate() {
    local src=$1
    [ -d "$src" ] || die "--src '$src' is not a directory"
    src="$(cd "$src" && pwd)"
    if [ -f "$src/Rapfi/CMakeLists.txt" ]; then
        CMAKE_DIR="$src/Rapfi"
    elif [ -f "$src/CMakeLists.txt" ] && [ -f "$src/core/version.cpp" ]; then
        CMAKE_DIR="$src"
    else
        die "'$src' holds neither Rapfi/CMakeLists.txt nor CMakeLists.txt with core/version.cpp: not a Rapfi checkout"
    fi
    MAJOR="$(rapfi_version_part MAJOR)"
    MINOR="$(rapfi_version_part MINOR)"
    # shellcheck disable=SC2034 # read by the scripts that source this file
    VERSION="${MAJOR:-?}.${MINOR:-?}.$(printf %02d "$(rapfi_version_part REVISION)")"
}

# rapfi_version_part MAJOR|MINOR|REVISION: that number of $CMAKE_DIR/core/version.cpp.
rapfi_version_part() {
    sed -n "s/^#define RAPFI_$1_VER *\([0-9]*\).*/\1/p" "$CMAKE_DIR/core/version.cpp" 2>/dev/null | head -1
}

# rapfi_build BUILD_DIR JOBS LOG [CMAKE_ARG...]: configures and builds $CMAKE_DIR into
# BUILD_DIR (started afresh when it was configured for another source), the output in LOG.
# Command modules (self-play, tuning, database tools) are not needed to play; without them
# Rapfi takes no command-line options and reads config.toml from its working directory, else
# from beside the binary, else uses its built-in classical config. The policy minimum lets
# CMake 4 configure the bundled libraries' older CMakeLists.
rapfi_build() {
    local build=$1 jobs=$2 logfile=$3
    shift 3
    command -v cmake >/dev/null || die "cmake (>= 3.18) is not installed: e.g. 'apt-get install cmake' or 'pip install cmake'"
    if [ -f "$build/CMakeCache.txt" ] && ! grep -qxF "CMAKE_HOME_DIRECTORY:INTERNAL=$CMAKE_DIR" "$build/CMakeCache.txt"; then
        rm -rf "$build"
    fi
    cmake -S "$CMAKE_DIR" -B "$build" -DCMAKE_BUILD_TYPE=Release -DNO_COMMAND_MODULES=ON \
        -DCMAKE_POLICY_VERSION_MINIMUM=3.5 "$@" >"$logfile" 2>&1 \
        || { tail -n 30 "$logfile" >&2; die "cmake could not configure the build (log: $logfile)"; }
    cmake --build "$build" -j "$jobs" >>"$logfile" 2>&1 \
        || { tail -n 30 "$logfile" >&2; die "the build failed (log: $logfile)"; }
}
