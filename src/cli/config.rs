//! `bkn-explorer config path`: where each of the user's files is, whether it is there, and
//! what is wrong with it.

use super::exit;
use crate::settings::{self, Settings};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(clap::Subcommand, Debug)]
enum What {
    /// Print where the settings, keys, themes, servers and data files are.
    Path,
}

pub fn run(args: Args) -> u8 {
    match args.what {
        What::Path => path(),
    }
}

/// What is wrong with each theme file of `themes` (every error of each, with its line), and
/// with the theme config.toml chooses when there is no such theme.
fn theme_problems(themes: &std::path::Path, chosen: Option<&str>) -> Vec<String> {
    use crate::tui::theme::Theme;
    let mut problems = Vec::new();
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(themes)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    for file in &files {
        let Some(name) = file.file_stem().and_then(|n| n.to_str()) else {
            continue;
        };
        if let Err(e) = Theme::find(name, Some(themes), &mut Vec::new()) {
            problems.push(e.to_string());
        }
    }
    if let Some(name) = chosen
        && !themes.join(format!("{name}.toml")).exists()
        && let Err(e) = Theme::find(name, Some(themes), &mut Vec::new())
    {
        problems.push(format!("{}: theme = \"{name}\": {e}", settings::FILE));
    }
    problems
}

fn path() -> u8 {
    let Some(dir) = settings::config_dir() else {
        eprintln!("bkn-explorer: no configuration directory (set XDG_CONFIG_HOME or HOME)");
        return exit::FAILURE;
    };
    let mut problems = Vec::new();
    let (settings, settings_problems) = Settings::read(&dir);
    problems.extend(settings_problems);
    let (_, key_problems) = crate::tui::keys_file::load(&dir);
    problems.extend(key_problems);
    problems.extend(theme_problems(
        &dir.join("themes"),
        settings.theme.as_deref(),
    ));
    let state = |p: &std::path::Path| if p.exists() { "" } else { "  (not there)" };
    let rows = [
        ("settings", dir.join(settings::FILE)),
        ("keys", dir.join(crate::tui::keys_file::FILE)),
        ("themes", dir.join("themes")),
        ("servers", dir.join("servers.json")),
    ];
    for (what, p) in &rows {
        println!("{what:<9}{}{}", p.display(), state(p));
    }
    if let Some(file) = settings.servers_file() {
        println!(
            "{:<9}{}{} (config.toml's servers)",
            "servers",
            file.display(),
            state(&file)
        );
        if file.exists()
            && let Err(e) = super::target::read_servers(&file)
        {
            problems.push(e);
        }
    }
    let servers_json = dir.join("servers.json");
    if servers_json.exists()
        && let Err(e) = super::target::read_servers(&servers_json)
    {
        problems.push(e);
    }
    match settings.data_dir() {
        Some(d) => println!("{:<9}{}{}", "data", d.display(), state(&d)),
        None => println!("{:<9}(none: set XDG_DATA_HOME or HOME)", "data"),
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    for f in crate::client::spec::discover::candidates(&cwd, None) {
        if f.exists() {
            println!("{:<9}{} (found here)", "servers", f.display());
        }
    }
    if !settings::colour_wanted() {
        println!("NO_COLOR is set: the explorer starts in the no-color theme");
    }
    for p in &problems {
        eprintln!("bkn-explorer: {p}");
    }
    if problems.is_empty() {
        exit::OK
    } else {
        exit::FAILURE
    }
}
