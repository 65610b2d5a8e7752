//! Where servers files are found when the user asks without naming one (`--servers` alone, the
//! explorer's "add server" list): the project's files of the usual tools, then the explorer's
//! own.

use super::ServerSpec;
use std::path::{Path, PathBuf};

/// The files looked for, in this order: Claude Code's, VS Code's and Cursor's in the working
/// directory, then `servers.json` in the explorer's configuration directory.
pub fn candidates(cwd: &Path, config_dir: Option<&Path>) -> Vec<PathBuf> {
    let mut out = vec![
        cwd.join(".mcp.json"),
        cwd.join(".vscode").join("mcp.json"),
        cwd.join(".cursor").join("mcp.json"),
    ];
    if let Some(dir) = config_dir {
        out.push(dir.join("servers.json"));
    }
    out
}

/// A servers file found, with its servers or why they cannot be read.
#[derive(Clone, Debug)]
pub struct Found {
    pub file: PathBuf,
    pub servers: Result<Vec<ServerSpec>, String>,
}

/// The servers files that exist among the candidates.
pub fn find(cwd: &Path, config_dir: Option<&Path>) -> Vec<Found> {
    candidates(cwd, config_dir)
        .into_iter()
        .filter(|f| f.is_file())
        .map(|file| Found {
            servers: super::read_servers_file(&file),
            file,
        })
        .collect()
}

/// Every server of the files found, the first file's first when two share a name; and the
/// mistakes of files that could not be read.
pub fn servers(cwd: &Path, config_dir: Option<&Path>) -> (Vec<ServerSpec>, Vec<String>) {
    let mut servers: Vec<ServerSpec> = Vec::new();
    let mut problems = Vec::new();
    for found in find(cwd, config_dir) {
        match found.servers {
            Ok(list) => {
                for s in list {
                    if !servers.iter().any(|t| t.name == s.name) {
                        servers.push(s);
                    }
                }
            }
            Err(e) => problems.push(e),
        }
    }
    (servers, problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_files_of_the_usual_tools_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().join("project");
        let config = dir.path().join("config");
        std::fs::create_dir_all(cwd.join(".vscode")).unwrap();
        std::fs::create_dir_all(&config).unwrap();
        std::fs::write(
            cwd.join(".mcp.json"),
            r#"{"mcpServers": {"a": {"command": "srv-a"}}}"#,
        )
        .unwrap();
        std::fs::write(
            cwd.join(".vscode/mcp.json"),
            r#"{"servers": {"a": {"type": "stdio", "command": "other"}, "b": {"type": "http", "url": "http://h/mcp"}}}"#,
        )
        .unwrap();
        std::fs::write(config.join("servers.json"), "{not json").unwrap();
        let (servers, problems) = servers(&cwd, Some(&config));
        let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(servers[0].location(), "srv-a", "the first file wins");
        assert_eq!(
            servers[1].origin.as_ref().unwrap().workspace,
            std::path::absolute(&cwd).unwrap()
        );
        assert_eq!(problems.len(), 1);
        assert!(problems[0].contains("servers.json: line 1"), "{problems:?}");
    }
}
