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
