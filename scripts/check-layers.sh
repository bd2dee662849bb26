#!/usr/bin/env bash
# Holds the library to its layers: fails, naming the file, the line and the
# two layers, where a module of a lower layer names one of a higher layer.
# The layers are listed once, in crates/ferry/layers.txt (read that file for
# the rules).
#
#   scripts/check-layers.sh [SRC [LAYERS]]
#
# SRC is the library's source directory (crates/ferry/src of this checkout
# by default), LAYERS the layer list (crates/ferry/layers.txt by default).
#
# What counts as naming a module: a path that starts with `crate::`,
# `super::`, `self::` or a submodule the file declares, in `use`
# declarations (brace groups expanded) and in code. Comments, strings and
# character literals are left out; so is test code (tests.rs files, tests/
# directories, items under #[cfg(test)], the `tests` layer's modules). A
# name the crate root re-exports (`crate::Buf`) counts as its home module
# (`buf`).
set -euo pipefail
cd "$(dirname "$0")/.."
src=${1:-crates/ferry/src}
layers=${2:-crates/ferry/layers.txt}
[ -f "$src/lib.rs" ] || { echo "check-layers: no $src/lib.rs" >&2; exit 2; }
[ -f "$layers" ] || { echo "check-layers: no $layers" >&2; exit 2; }
layers=$(cd "$(dirname "$layers")" && pwd)/$(basename "$layers")

files=$(cd "$src" && find . -name '*.rs' | sed 's|^\./||' | LC_ALL=C sort)

# Two passes over the sources: the first finds each file's module, the
# submodules it declares (and which of them are test-only) and the crate
# root's re-exports; the second checks every path.
# shellcheck disable=SC2086
(cd "$src" && exec awk -v layers_file="$layers" -v srcdir="$src" -f /dev/fd/3 \
    pass=1 $files pass=2 $files) 3<<'AWK'
BEGIN {
    nlayers = 0
    while ((getline line < layers_file) > 0) {
        sub(/#.*/, "", line)
        n = split(line, f, /[ \t]+/)
        first = 1
        for (i = 1; i <= n; i++) {
            if (f[i] == "") continue
            if (first) { nlayers++; lname[nlayers] = f[i]; first = 0; continue }
            layer_of_mod[f[i]] = nlayers
        }
    }
    close(layers_file)
    if (nlayers == 0) {
        print "check-layers: no layers in " layers_file > "/dev/stderr"
        fatal = 1
        exit
    }
    root_layer = nlayers + 1
    lname[root_layer] = "the crate root"
    bad = 0
}

# ---- per file: module path, state reset -----------------------------------
FNR == 1 {
    file = FILENAME
    mod = file
    sub(/\.rs$/, "", mod)
    sub(/(^|\/)(mod|lib)$/, "", mod)
    gsub(/\//, "::", mod)
    in_bc = 0; in_str = 0; raw_hashes = -1
    skip = 0; skip_started = 0; skip_depth = 0
    acc = ""; acc_line = 0; acc_pub = 0
    pending_test = 0
}

# Strips comments, strings and character literals from a line (keeping
# their quotes as placeholders); block comments and strings may span lines.
function clean(line,   out, i, n, c, two, j, h, prev) {
    out = ""; n = length(line); i = 1
    while (i <= n) {
        c = substr(line, i, 1); two = substr(line, i, 2)
        if (in_bc) {
            if (two == "*/") { in_bc--; i += 2; continue }
            if (two == "/*") { in_bc++; i += 2; continue }
            i++; continue
        }
        if (in_str) {
            if (raw_hashes >= 0) {
                if (c == "\"" && substr(line, i + 1, raw_hashes) == substr("################", 1, raw_hashes)) {
                    in_str = 0; i += 1 + raw_hashes; raw_hashes = -1; out = out "\""; continue
                }
                i++; continue
            }
            if (c == "\\") { i += 2; continue }
            if (c == "\"") { in_str = 0; out = out "\"" }
            i++; continue
        }
        if (two == "//") break
        if (two == "/*") { in_bc = 1; i += 2; continue }
        if (c == "\"") { in_str = 1; raw_hashes = -1; out = out "\""; i++; continue }
        prev = (i > 1) ? substr(line, i - 1, 1) : " "
        if (c == "r" && prev !~ /[A-Za-z0-9_]/) {
            j = i + 1; h = 0
            while (substr(line, j, 1) == "#") { j++; h++ }
            if (substr(line, j, 1) == "\"") {
                in_str = 1; raw_hashes = h; out = out "\""; i = j + 1; continue
            }
        }
        if (c == "'") {
            if (substr(line, i + 1, 1) == "\\") {
                j = index(substr(line, i + 2), "'")
                if (j > 0) { i = i + 2 + j; out = out "' '"; continue }
            } else if (substr(line, i + 2, 1) == "'") {
                i += 3; out = out "' '"; continue
            }
        }
        out = out c; i++
    }
    return out
}

# Is this attribute text a cfg that compiles only for tests?
function test_only(a) {
    if (a ~ /cfg\(test\)/) return 1
    if (a ~ /cfg\(all\(/ && a ~ /[(, ]test[,)]/ && a !~ /not\(test\)/) return 1
    return 0
}

# Feeds cleaned text to the skipper of a test-only item: returns what is
# left of it after the item ends ("" while it goes on).
function skip_text(t,   i, n, c) {
    n = length(t)
    for (i = 1; i <= n; i++) {
        c = substr(t, i, 1)
        if (c == "{") { skip_depth++; skip_started = 1 }
        else if (c == "}") {
            skip_depth--
            if (skip_started && skip_depth == 0) { skip = 0; return substr(t, i + 1) }
        } else if (c == ";" && skip_depth == 0 && !skip_started) { skip = 0; return substr(t, i + 1) }
    }
    return ""
}

function is_test_mod(m,   s, k, n, seg, i) {
    n = split(m, seg, "::")
    s = ""
    for (i = 1; i <= n; i++) {
        s = (i == 1) ? seg[1] : s "::" seg[i]
        if (seg[i] == "tests" || (s in test_mod)) return 1
        if ((s in layer_of_mod) && lname[layer_of_mod[s]] == "tests") return 1
    }
    return 0
}

# The layer of module path m (longest listed prefix), 0 if none.
function layer(m,   s, n, seg, i, best) {
    n = split(m, seg, "::")
    s = ""; best = 0
    for (i = 1; i <= n; i++) {
        s = (i == 1) ? seg[1] : s "::" seg[i]
        if (s in layer_of_mod) best = layer_of_mod[s]
    }
    return best
}

# The parent of module path m ("" for a top-level module or the root).
function parent(m,   i) {
    i = match(m, /::[^:]*$/)
    return i ? substr(m, 1, i - 1) : ""
}

# Absolute path (no leading crate::) of path p named in module m, or "" if
# it is not a path into the crate (std::, an extern crate, a local name).
function resolve(p, m,   n, seg, i, base, rest) {
    n = split(p, seg, "::")
    i = 1
    if (seg[1] == "crate") { base = ""; i = 2 }
    else if (seg[1] == "self") { base = m; i = 2 }
    else if (seg[1] == "super") {
        base = m
        while (i <= n && seg[i] == "super") { base = parent(base); i++ }
    } else if ((m SUBSEP seg[1]) in child) { base = m }
    else return ""
    if (base == "" && i <= n && (seg[i] in reexport)) {
        base = reexport[seg[i]]; i++
        # the re-export's own path ends with the item's name
    }
    rest = ""
    for (; i <= n; i++) rest = (rest == "") ? seg[i] : rest "::" seg[i]
    if (base == "") return rest
    if (rest == "") return base
    return base "::" rest
}

# Expands a use tree ("a::{b::{c, d as e}, f}") into its leaf paths, in
# out[1..]; returns how many.
function expand(s, out,   toks, n, i, t, sp, stack, cur, cnt, has, skipnext) {
    gsub(/[ \t]+/, " ", s)
    gsub(/\{/, " { ", s); gsub(/\}/, " } ", s); gsub(/,/, " , ", s); gsub(/::/, " :: ", s)
    n = split(s, toks, " ")
    sp = 0; stack[0] = ""; cur = ""; cnt = 0; has = 0; skipnext = 0
    for (i = 1; i <= n; i++) {
        t = toks[i]
        if (t == "" || t == "::") continue
        if (skipnext) { skipnext = 0; continue }
        if (t == "as") { skipnext = 1; continue }
        if (t == "{") { sp++; stack[sp] = cur; has = 0; continue }
        if (t == ",") { if (has) out[++cnt] = cur; cur = stack[sp]; has = 0; continue }
        if (t == "}") { if (has) out[++cnt] = cur; sp--; cur = stack[sp]; has = 0; continue }
        if (t == "self" && cur != "") { has = 1; continue }
        if (t == "*") { has = 1; continue }
        cur = (cur == "") ? t : cur "::" t
        has = 1
    }
    if (has) out[++cnt] = cur
    return cnt
}

function check(p, line, reexp,   target, tl, sl, first) {
    target = resolve(p, mod)
    if (target == "") return
    if (reexp && (target == mod || index(target, mod "::") == 1)) return
    split(target, first, "::")
    if (is_test_mod(target)) return
    tl = layer(target)
    if (tl == 0) {
        tl = (first[1] in toplevel) ? 0 : root_layer
        if (tl == 0) {
            printf "%s/%s:%d: %s names %s, a module in no layer of the list\n", srcdir, file, line, mod, target
            bad = 1
            return
        }
    }
    sl = layer(mod)
    if (tl > sl) {
        printf "%s/%s:%d: %s (%s) names %s (%s)\n", srcdir, file, line, lname[sl], mod, lname[tl], p
        bad = 1
    }
}

# ---- pass 1: modules, submodules, test-only submodules, re-exports --------
pass == 1 {
    t = clean($0)
    if (t ~ /#\[cfg/ && test_only(t)) pending_test = 1
    if (match(t, /(^|[^A-Za-z0-9_])mod[ \t]+[A-Za-z_][A-Za-z0-9_]*/)) {
        name = substr(t, RSTART, RLENGTH); sub(/.*mod[ \t]+/, "", name)
        child[mod SUBSEP name] = 1
        full = (mod == "") ? name : mod "::" name
        if (mod == "") toplevel[name] = 1
        if (pending_test) test_mod[full] = 1
        pending_test = 0
    } else if (t ~ /[;{]/ && t !~ /^[ \t]*#\[/) pending_test = 0
    if (mod == "") {
        # the crate root's re-exports: name -> home module
        if (acc != "" || t ~ /^[ \t]*pub[ \t]+use[ \t]/) {
            acc = acc " " t
            if (index(acc, ";")) {
                u = acc; acc = ""
                sub(/^[ \t]*pub[ \t]+use[ \t]+/, "", u); sub(/;.*/, "", u)
                k = expand(u, leaves)
                for (j = 1; j <= k; j++) {
                    nm = leaves[j]; sub(/.*::/, "", nm)
                    home = leaves[j]; sub(/::[^:]*$/, "", home)
                    if (home != leaves[j]) reexport[nm] = home
                }
            }
        }
    }
    next
}

# ---- pass 2: the check ----------------------------------------------------
pass == 2 && FNR == 1 {
    checked = (mod != "") && !is_test_mod(mod) && file !~ /(^|\/)tests\//
    if (checked && layer(mod) == 0) {
        printf "%s/%s: module %s is in no layer of the list\n", srcdir, file, mod
        bad = 1
        checked = 0
    }
}

pass == 2 && checked {
    t = clean($0)
    if (skip) { t = skip_text(t); if (skip) next }
    if (t ~ /#\[cfg/ && test_only(t)) {
        rest = t; sub(/.*#\[cfg[^]]*\]/, "", rest)
        skip = 1; skip_started = 0; skip_depth = 0
        t = skip_text(rest)
        if (skip) next
    }
    # use declarations, possibly over several lines
    if (acc == "" && t ~ /^[ \t]*(pub(\([^)]*\))?[ \t]+)?use[ \t]/) {
        acc_line = FNR
        acc_pub = (t ~ /^[ \t]*pub/)
        acc = t
        sub(/^[ \t]*(pub(\([^)]*\))?[ \t]+)?use[ \t]+/, "", acc)
        t = ""
    } else if (acc != "") {
        acc = acc " " t; t = ""
    }
    if (acc != "" && index(acc, ";")) {
        u = acc; acc = ""
        t = substr(u, index(u, ";") + 1)
        sub(/;.*/, "", u)
        k = expand(u, leaves)
        for (j = 1; j <= k; j++) check(leaves[j], acc_line, acc_pub)
    }
    # paths in code
    while (match(t, /(^|[^A-Za-z0-9_:])[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)+/)) {
        p = substr(t, RSTART, RLENGTH)
        t = substr(t, RSTART + RLENGTH)
        sub(/^[^A-Za-z_]/, "", p)
        check(p, FNR, 0)
    }
}

END { exit fatal ? 2 : bad }
AWK
