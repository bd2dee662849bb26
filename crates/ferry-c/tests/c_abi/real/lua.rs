//! Lua 5.4.4: the interpreter. Its io library is stdio through and
//! through: fopen/freopen/tmpfile/popen, getc_unlocked under flockfile
//! for lines and numbers (with ungetc for the lookahead), fread for
//! blocks, fwrite, fseeko/ftello, setvbuf, ferror/clearerr, and lua.c
//! loads scripts with getc/fread (from stdin too) and reports errors on
//! stderr. Built with its own Makefile (`make lua`, Linux flags). The
//! scripts below are run by both builds on generated files.

use super::{copy_tree, ferry_cppflags, ferry_libs, pair, same, sh, source, Case, Gen, Out, Pair};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn build(dir: &Path, ferry: bool) -> PathBuf {
    copy_tree(&source("lua"), dir);
    let mut cc = "cc -std=gnu99".to_string();
    let mut libs = String::new();
    if ferry {
        cc = format!("{cc} {}", ferry_cppflags());
        libs = ferry_libs();
    }
    sh(
        &dir.join("src"),
        "make lua",
        Command::new("make").args([
            "-j1",
            "lua",
            &format!("CC={cc}"),
            "CFLAGS=-O1 -DLUA_COMPAT_5_3 -DLUA_USE_LINUX",
            "SYSLIBS=-Wl,-E -ldl",
            &format!("MYLIBS={libs}"),
        ]),
    );
    dir.join("src/lua")
}

fn lua() -> &'static Pair {
    static P: OnceLock<Pair> = OnceLock::new();
    pair(&P, "lua", build)
}

/// Copies each file named on the command line in many ways: whole, in
/// blocks of several sizes, by lines with and without their newlines, a
/// byte at a time; the output streams in each buffering mode.
const COPY: &str = r#"
for _, name in ipairs(arg) do
  local function copy(tag, mode, size, reader)
    local f = assert(io.open(name, "rb"))
    local o = assert(io.open(name .. "." .. tag, "wb"))
    o:setvbuf(mode, size)
    reader(f, o)
    print(name, tag, f:seek("cur"), o:seek("cur"), f:read(0), o:close(), f:close())
  end
  copy("all", "full", nil, function(f, o) o:write(f:read("a")) end)
  for _, n in ipairs({1, 7, 4095, 4096, 4097, 65536}) do
    copy("b" .. n, "full", n, function(f, o)
      for b in f:lines(n) do o:write(b) end
    end)
  end
  copy("L", "line", nil, function(f, o) for l in f:lines("L") do o:write(l) end end)
  copy("l", "no", nil, function(f, o) for l in f:lines() do o:write(l, "\n") end end)
  copy("mix", "full", 100, function(f, o)
    while true do
      local a, b, c = f:read(3, "l", 1)
      if not a then break end
      o:write(a, b or "", c or "")
    end
  end)
end
"#;

/// Random seeks, reads and writes on one w+ file (Lua's generator is
/// seeded, so both builds do the same), and the same on append streams.
const SEEKS: &str = r#"
math.randomseed(tonumber(arg[1]))
local f = assert(io.open("rw", "w+b"))
f:setvbuf(arg[2], tonumber(arg[3]))
for i = 1, 400 do
  local op = math.random(6)
  if op == 1 then print("set", f:seek("set", math.random(0, 70000)))
  elseif op == 2 then print("cur", f:seek("cur", math.random(-5000, 5000)))
  elseif op == 3 then print("end", f:seek("end", -math.random(0, 100)))
  elseif op == 4 then local s = f:read(math.random(0, 9000)); print("read", s and #s, s and s:sub(1, 8))
  elseif op == 5 then print("line", f:read("L"))
  else print("write", f:write(string.rep(string.char(64 + i % 26), math.random(0, 6000))) and "ok") end
  -- C wants a seek between a write and a read (and back): without it
  -- glibc reads from where its last block write ended (C11 7.21.5.3).
  f:seek("cur")
end
print(f:seek("end"), f:close())
local a = assert(io.open("rw", "a+"))
a:write("appended\n")
print(a:seek("set", 10), a:read(20), a:seek("cur"), a:write("more") ~= nil, a:seek("cur"), a:seek("end"))
a:close()
local t = io.tmpfile()
t:write(string.rep("t", 9000))
print(t:seek("set", 4094), #t:read("a"), t:seek("cur", -100), #t:read(200), t:read(1))
t:close()
"#;

/// Numbers as io.read("n") reads them: Lua's own scanner over getc and
/// ungetc (hex, exponents, signs, what it refuses and where it stops).
const NUMBERS: &str = r#"
local f = assert(io.open(arg[1]))
while true do
  local n = f:read("n")
  if n == nil then
    local rest = f:read(1)
    if rest == nil then break end
    io.write("skip ", string.format("%q", rest), "\n")
  else
    io.write(math.type(n), " ", string.format("%.17g", n), "\n")
  end
end
"#;

/// The io library's other edges: popen both ways, standard streams,
/// closed files, modes, errors with their messages.
const EDGES: &str = r#"
local function show(...) local t = table.pack(...) for i = 1, t.n do t[i] = tostring(t[i]) end print(table.concat(t, " | ")) end
show(io.open("missing"))
show(io.open("missing", "w+") ~= nil)
show(pcall(io.lines, "nope"))
show(io.open(".", "r"):read(1))
local p = io.popen("cat in.txt; echo err >&2; exit 3")
show(#p:read("a"), p:close())
local q = io.popen("wc -c > counted", "w")
q:write(string.rep("q", 70000))
show(q:close())
show(io.open("counted"):read("a"))
local d = io.open("/dev/full", "w")
show(d:write("x") ~= nil, d:flush())
show(d:write(string.rep("y", 300000)) ~= nil, d:close())
local e = io.open("/dev/full", "w"); e:setvbuf("no")
show(e:write("x"))
local f = io.open("in.txt")
f:close()
show(pcall(f.read, f), io.type(f))
show(io.read("l"), io.read("n"), io.read(5), io.read("L"), #(io.read("a") or ""), io.read("a"), io.read("l"))
io.stdout:setvbuf("line")
io.write("line mode\n")
io.stderr:write("to stderr\n")
io.output("out.txt")
io.write("redirected output\n")
io.close()
io.output(io.stdout)
io.input("in.txt")
show(io.read("L"))
for l in io.lines("in.txt", 2) do io.write(l) break end
print()
os.exit(tonumber(arg[1]) or 0)
"#;

fn numbers_text(g: &mut Gen) -> Vec<u8> {
    const PIECES: [&str; 24] = [
        "12",
        "-7",
        "+3",
        "0x1F",
        "0X1p4",
        "-0x.8",
        "3.25",
        ".5",
        "5.",
        "1e10",
        "1E-3",
        "2e+",
        "1e",
        "--5",
        "0x",
        "99999999999999999999",
        "9223372036854775807",
        "9223372036854775808",
        "inf",
        "nan",
        "abc",
        "0.1e400",
        "  \t",
        "\n",
    ];
    let mut v = Vec::new();
    for _ in 0..3000 {
        v.extend_from_slice(PIECES[g.below(PIECES.len() as u64) as usize].as_bytes());
        v.push(if g.below(4) == 0 { b'\n' } else { b' ' });
    }
    v
}

#[test]
fn copies_files_every_way() {
    let p = lua();
    let mut g = Gen::new(0x10a);
    let mut case = Case::new(&["copy.lua"]).file("copy.lua", COPY.as_bytes());
    for &n in &super::SIZES {
        let name = format!("in{n}");
        case.args.push(name.clone());
        let data = if n % 2 == 0 { g.text(n) } else { g.bytes(n) };
        case = case.file(&name, &data);
    }
    let r = same(p, "lua", "copy.lua", &case);
    assert_eq!(r.status, Some(0), "{}", String::from_utf8_lossy(&r.stderr));
}

#[test]
fn seeks_reads_and_writes_at_random() {
    let p = lua();
    for (seed, mode, size) in [
        ("1", "full", "0"),
        ("2", "full", "100"),
        ("3", "no", "0"),
        ("4", "line", "0"),
        ("5", "full", "70000"),
    ] {
        let case = Case::new(&["seeks.lua", seed, mode, size]).file("seeks.lua", SEEKS.as_bytes());
        let r = same(p, "lua", &format!("seeks.lua {seed} {mode} {size}"), &case);
        assert_eq!(r.status, Some(0), "{}", String::from_utf8_lossy(&r.stderr));
    }
}

#[test]
fn reads_numbers() {
    let p = lua();
    let mut g = Gen::new(99);
    for i in 0..3 {
        let case = Case::new(&["numbers.lua", "nums"])
            .file("numbers.lua", NUMBERS.as_bytes())
            .file("nums", &numbers_text(&mut g));
        same(p, "lua", &format!("numbers.lua #{i}"), &case);
    }
}

#[test]
fn edges_of_the_io_library() {
    let p = lua();
    let input = b"first line\n  123 rest of it\nmore\nand the end";
    let case = |code: &str| {
        Case::new(&["edges.lua", code])
            .file("edges.lua", EDGES.as_bytes())
            .file("in.txt", input)
    };
    same(
        p,
        "lua",
        "edges.lua (stdin a pipe)",
        &case("0").stdin(input),
    );
    same(
        p,
        "lua",
        "edges.lua (stdin a file)",
        &case("4").stdin_file("in.txt"),
    );
    same(p, "lua", "edges.lua (stdin empty)", &case("0"));
}

/// Scripts from stdin and from files, good and bad; stdout on /dev/full
/// and into a closed pipe.
#[test]
fn scripts_and_their_errors() {
    let p = lua();
    let big = "for i = 1, 20000 do io.write(i, '\\n') end print('done')\n";
    same(
        p,
        "lua",
        "- <script",
        &Case::new(&["-"]).stdin(big.as_bytes()),
    );
    same(
        p,
        "lua",
        "script file",
        &Case::new(&["s.lua"]).file("s.lua", big.as_bytes()),
    );
    let shebang = "#!/usr/bin/lua\nprint(...)\n";
    same(
        p,
        "lua",
        "#! line",
        &Case::new(&["s.lua", "a", "b"]).file("s.lua", shebang.as_bytes()),
    );
    same(
        p,
        "lua",
        "syntax error",
        &Case::new(&["s.lua"]).file("s.lua", b"x = = 1\n"),
    );
    let boom = "local function f() error('boom') end\nf()\n";
    same(
        p,
        "lua",
        "runtime error",
        &Case::new(&["s.lua"]).file("s.lua", boom.as_bytes()),
    );
    same(p, "lua", "missing script", &Case::new(&["missing.lua"]));
    same(p, "lua", "a directory", &Case::new(&["."]));
    // Precompiled chunks: freopen in binary mode on the same FILE.
    let dump =
        "local f = io.open('c.luac', 'wb') f:write(string.dump(load('print(6 * 7)'))) f:close()";
    let r = same(p, "lua", "string.dump", &Case::new(&["-e", dump]));
    let chunk = r.files["c.luac"].clone();
    same(
        p,
        "lua",
        "binary chunk",
        &Case::new(&["c.luac"]).file("c.luac", &chunk),
    );
    for out in [Out::Full, Out::Closed] {
        same(
            p,
            "lua",
            &format!("writes to {out:?}"),
            &Case::new(&["-"]).stdin(big.as_bytes()).out(out),
        );
        let flushed = "io.write('x') io.stderr:write(tostring(io.stdout:flush()), '\\n')";
        same(
            p,
            "lua",
            &format!("flush on {out:?}"),
            &Case::new(&["-e", flushed]).out(out),
        );
    }
}
