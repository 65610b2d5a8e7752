//! Every integration test in one binary (`cargo test` links one test program, not one per
//! file, and the long tests of one file overlap with the short ones of another). Each file of
//! `tests/` stays a module of its own: `cargo test binding::` runs one file's tests, `cargo
//! test --test suite NAME` one test. A file of `tests/` not named here would never run:
//! `every_test_file_is_in_the_suite` below says so.

mod common;

mod big_files;
mod binding;
mod certify;
mod client;
mod conformance_fixtures;
mod conformance_props;
mod dac_server;
mod doctor;
mod faults;
mod headless;
mod inspector;
mod journal;
mod listen;
mod load;
mod loader_props;
mod locust;
mod mcp_conformance;
mod oauth;
mod proxy;
mod proxy_ends;
mod readme;
mod scenarios;
mod schema_types;
mod security;
mod sessions;
mod tasks;
mod tui_certify;
mod tui_e2e;
mod tui_snapshots;
mod tui_update;
mod usr_server;

/// A test file added to `tests/` but not to this list is not compiled, and its tests never
/// run: this test fails until it is named above.
#[test]
fn every_test_file_is_in_the_suite() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let suite = std::fs::read_to_string(dir.join("suite.rs")).unwrap();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        if path.extension().is_some_and(|e| e == "rs")
            && stem != "suite"
            && !suite.contains(&format!("\nmod {stem};\n"))
        {
            missing.push(stem.to_owned());
        }
    }
    assert!(
        missing.is_empty(),
        "add `mod NAME;` to tests/suite.rs for {missing:?}"
    );
}
