//! The README says what is true: its table of keys is the one the explorer uses (made from
//! the same bindings as the help overlay and the command palette).

#[test]
fn the_readme_lists_every_key() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("the README");
    let table = bkn_explorer::tui::action::keys_markdown();
    if std::env::var_os("BKN_PRINT_KEYS").is_some() {
        println!("{table}");
    }
    assert!(
        readme.contains(&table),
        "the README's table of keys is out of date; it should be:\n{table}"
    );
}

/// The README's scenario is one the loader takes (the shipped ones are run by
/// tests/scenarios.rs).
#[test]
fn the_readme_scenario_is_a_scenario() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("the README");
    let start = readme.find("```yaml\n").expect("a YAML block") + "```yaml\n".len();
    let end = start + readme[start..].find("```").expect("its end");
    let scenario =
        bkn_explorer::scenario::parse(&readme[start..end], std::path::Path::new("README.md"))
            .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(scenario.steps.len(), 2);
}

/// The README's keys.toml example loads without a conflict (it once bound `x`, which closes a
/// dialogue), and the README names every theme `T` cycles through.
#[test]
fn the_readme_keys_example_loads_and_every_theme_is_named() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("the README");
    let start = readme
        .find("```toml\n# keys.toml\n")
        .expect("the keys.toml example")
        + "```toml\n".len();
    let end = start + readme[start..].find("```").expect("its end");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("keys.toml"), &readme[start..end]).unwrap();
    let (_, problems) = bkn_explorer::tui::keys_file::load(dir.path());
    assert!(problems.is_empty(), "{problems:?}");
    for name in bkn_explorer::tui::theme::Theme::names(None) {
        assert!(
            readme.contains(&format!("`{name}`")),
            "the README does not name {name}"
        );
    }
}

/// `rust-version` in Cargo.toml is true: no dependency asks for a newer Rust, and the README
/// names the same one.
#[test]
fn the_rust_version_is_what_the_dependencies_need() {
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let ours = env!("CARGO_PKG_RUST_VERSION");
    assert!(!ours.is_empty(), "Cargo.toml names no rust-version");
    let out = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--locked"])
        .args(["--manifest-path", manifest])
        .output()
        .expect("cargo metadata");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // "1.89" is "1.89.0".
    let version = |v: &str| -> Vec<u32> {
        let mut parts: Vec<u32> = v.split('.').filter_map(|p| p.parse().ok()).collect();
        parts.resize(3, 0);
        parts
    };
    let newest = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["name"] != "bkn-explorer")
        .filter_map(|p| Some((p["rust_version"].as_str()?, p["name"].as_str()?)))
        .max_by_key(|(v, _)| version(v))
        .unwrap();
    assert!(
        version(ours) >= version(newest.0),
        "Cargo.toml says rust-version {ours}, but {} needs {}",
        newest.1,
        newest.0
    );
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    assert!(
        readme.contains(&format!("Rust {ours}")),
        "the README names another Rust than {ours}"
    );
}

/// The README's first command, `cargo run --release`, needs no `--bin`: with more than one
/// binary in the package (the tests' fault server is one), cargo refuses to choose unless
/// Cargo.toml names the default.
#[test]
fn the_readme_run_command_picks_the_explorer() {
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    assert!(
        readme.contains("\ncargo run --release\n"),
        "the README runs the explorer another way"
    );
    let out = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--no-deps", "--locked"])
        .args(["--manifest-path", manifest])
        .output()
        .expect("cargo metadata");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let package = &metadata["packages"][0];
    let binaries: Vec<&str> = package["targets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["kind"].as_array().unwrap().iter().any(|k| k == "bin"))
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(binaries.contains(&"bkn-explorer"), "{binaries:?}");
    if binaries.len() > 1 {
        assert_eq!(
            package["default_run"], "bkn-explorer",
            "cargo run cannot choose among {binaries:?}: Cargo.toml needs default-run"
        );
    }
}
