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
