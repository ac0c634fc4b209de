// napi's link setup, and SQLite itself: better-sqlite3 12's own amalgamation compiled
// with its own options (deps/sqlite3/, copied from the npm package by
// tools/update-sqlite.mjs). That amalgamation's parser was generated with
// SQLITE_ENABLE_UPDATE_DELETE_LIMIT, which no compile flag can add to the stock one
// that libsqlite3-sys bundles; rusqlite takes only its bindings from libsqlite3-sys
// (the `in_gecko` feature: "SQLite is linked in by the embedder").
use std::fs;

fn main() {
    napi_build::setup();

    let dir = "deps/sqlite3";
    let defines = fs::read_to_string(format!("{dir}/defines.gypi")).expect("deps/sqlite3/defines.gypi");
    let mut build = cc::Build::new();
    build.file(format!("{dir}/sqlite3.c")).include(dir).warnings(false);
    // defines.gypi lists one define per line: 'NAME' or 'NAME=VALUE',
    for define in defines
        .lines()
        .filter_map(|l| l.trim().strip_prefix('\'')?.strip_suffix("',"))
    {
        match define.split_once('=') {
            Some((name, value)) => build.define(name, value),
            None => build.define(define, None),
        };
    }
    // One addition to better-sqlite3's list. The hub's schema checks `x IN (...)` lists
    // (agents.cli, ...), which SQLite 3.53 evaluates with an ephemeral b-tree on every
    // insert and update. Each one creates a page cache whose first allocation is a bulk
    // block of ~170 KB; glibc hands it back to the OS on free, so every write paid an
    // sbrk pair (registerAgent: ~120 µs instead of ~45). With no bulk block, pages are
    // allocated one by one as needed. Results are unaffected.
    build.define("SQLITE_DEFAULT_PCACHE_INITSZ", "0");
    build.compile("sqlite3");
    println!("cargo:rerun-if-changed={dir}");
}
