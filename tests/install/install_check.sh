#!/bin/sh
# Checks of the installed tree, run by tests/install/CMakeLists.txt.
#
#   install_check.sh library <libdir> <soname> <backend> <readelf> <nm>
#     libmla_decode.so: its SONAME is <soname>; it exports mla_* functions only; on cuda it needs
#     no libcudart (the runtime is inside).
#   install_check.sh recipes <README.md> <program.c> <workdir> <prefix> <libdir> <cuda> <rocm> <tag>...
#     (<cuda>, <rocm>: the toolkit roots, "-" where the build has none)
#     Runs the link lines of README.md's "link recipes" block (the sh block after the marker
#     `<!-- link recipes: run by tests/install -->`) exactly as written, with P, L, CUDA and ROCM
#     set to the installed tree (the block's own `P=...` line is the reader's to edit), compiling
#     <program.c> as app.c; runs ./app after every `cc` line. A line is taken when its trailing
#     `# <tag>` is one of <tag>... (none, cuda, hip, pkg-config), or when it has no tag and `all`
#     is one of them. Fails when a tag asked for has no `cc` line.
set -eu

fail() { echo "install_check: $*" >&2; exit 1; }

library() {
    libdir=$1 soname=$2 backend=$3 readelf=$4 nm=$5
    lib="$libdir/libmla_decode.so"
    [ -f "$lib" ] || fail "no $lib"
    dyn=$("$readelf" -d "$lib")
    got=$(printf '%s\n' "$dyn" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
    [ "$got" = "$soname" ] || fail "SONAME of $lib is '$got', expected '$soname'"
    [ -e "$libdir/$soname" ] || fail "no $libdir/$soname (the name the loader looks for)"
    needed=$(printf '%s\n' "$dyn" | sed -n 's/.*Shared library: \[\(.*\)\].*/\1/p' | tr '\n' ' ')
    echo "$lib: SONAME $got; needs: $needed"
    if [ "$backend" = cuda ]; then
        case "$needed" in *libcudart*) fail "$lib needs libcudart: the runtime should be inside" ;; esac
    fi
    exports=$("$nm" -D --defined-only "$lib" | awk '{print $NF}')
    [ -n "$exports" ] || fail "$lib exports nothing"
    others=$(printf '%s\n' "$exports" | grep -v '^mla_' || true)
    [ -z "$others" ] || fail "$lib exports more than the mla_* functions:
$others"
    echo "exports $(printf '%s\n' "$exports" | wc -l) symbols, all mla_*"
}

recipes() {
    readme=$1 program=$2 work=$3 prefix=$4 libdir=$5 cuda=${6#-} rocm=${7#-}
    shift 7
    rm -rf "$work"
    mkdir -p "$work"
    cp "$program" "$work/app.c"
    script="$work/recipes.sh"
    {
        echo "P='$prefix' L='$libdir' CUDA='$cuda' ROCM='$rocm'"
        echo "cd '$work'"
    } >"$script"
    awk '/<!-- link recipes: run by tests\/install -->/ { f = 1; next }
         f == 1 && /^```/ { f = 2; next }
         f == 2 && /^```/ { exit }
         f == 2 { print }' "$readme" >"$work/block.txt"
    [ -s "$work/block.txt" ] || fail "no link recipes block in $readme"
    for want in "$@"; do
        count=0
        while IFS= read -r line; do
            case "$line" in '' | '#'* | 'P='*) continue ;; esac
            tag=$(printf '%s\n' "$line" | sed -n 's/.*#[[:space:]]*\([a-z-]*\)[[:space:]]*$/\1/p')
            [ -n "$tag" ] || tag=all
            [ "$tag" = "$want" ] || continue
            printf '%s\n' "$line" >>"$script"
            case "$line" in
                'cc '*) count=$((count + 1)); printf './app\nrm -f app\n' >>"$script" ;;
            esac
        done <"$work/block.txt"
        [ "$count" -gt 0 ] || fail "README's link recipes have no cc line tagged '$want'"
        echo "$count link line(s) tagged '$want'"
    done
    sh -ex "$script"
}

mode=${1:-}
[ $# -gt 0 ] && shift
case "$mode" in
    library) [ $# -eq 5 ] || fail "library: 5 arguments"; library "$@" ;;
    recipes) [ $# -ge 8 ] || fail "recipes: at least 8 arguments"; recipes "$@" ;;
    *) fail "usage: install_check.sh library|recipes ..." ;;
esac
