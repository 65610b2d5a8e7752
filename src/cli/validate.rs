//! `bkn-explorer validate FILE...`: checks messages against the specification.
//!
//! A file holds one message, a JSON array of messages, or JSON Lines; a sequence is also
//! checked as one dialogue, in order. Exit 0 when everything conforms, 1 when something does
//! not, 2 when a file cannot be read or parsed.

use super::exit;
use crate::protocol::Interface;
use crate::protocol::conformance::{Finding, check_message, check_sequence};
use crate::protocol::document::{self, Document, Layout};
use clap::ValueEnum;
use serde::Serialize;
use std::io::Read;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Files to check; `-` reads standard input.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Check every message as this interface (dac or usr) whatever its Header says.
    #[arg(long, value_parser = parse_interface)]
    interface: Option<Interface>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
}

pub(crate) fn parse_interface(s: &str) -> Result<Interface, String> {
    Interface::from_code(s).ok_or_else(|| format!("'{s}' is not an interface: use dac or usr"))
}

/// The result for one file.
#[derive(Serialize)]
struct FileReport {
    file: String,
    messages: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    findings: Vec<Located>,
}

/// A finding with where its message is in the file.
#[derive(Serialize)]
struct Located {
    /// Position of the message in a sequence (0-based); absent for a single message.
    #[serde(skip_serializing_if = "Option::is_none")]
    index: Option<usize>,
    /// Line where the message starts, for JSON Lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<usize>,
    pointer: String,
    requirement: String,
    check: String,
    level: crate::protocol::conformance::Level,
    message: String,
}

#[derive(Serialize)]
struct Summary {
    files: usize,
    messages: usize,
    findings: usize,
    unreadable: usize,
    conforms: bool,
}

pub fn run(args: Args) -> u8 {
    let reports: Vec<FileReport> = args
        .files
        .iter()
        .map(|path| check_file(path, args.interface))
        .collect();
    let summary = Summary {
        files: reports.len(),
        messages: reports.iter().map(|r| r.messages).sum(),
        findings: reports.iter().map(|r| r.findings.len()).sum(),
        unreadable: reports.iter().filter(|r| r.error.is_some()).count(),
        conforms: reports
            .iter()
            .all(|r| r.error.is_none() && r.findings.is_empty()),
    };
    match args.format {
        Format::Text => print_text(&reports, &summary),
        Format::Json => {
            let out = serde_json::json!({"files": reports, "summary": summary});
            println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
        }
    }
    if summary.unreadable > 0 {
        exit::FAILURE
    } else if summary.findings > 0 {
        exit::NONCONFORMANT
    } else {
        exit::OK
    }
}

fn read(path: &PathBuf) -> std::io::Result<String> {
    if path.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text)?;
        Ok(text)
    } else {
        std::fs::read_to_string(path)
    }
}

fn check_file(path: &PathBuf, interface: Option<Interface>) -> FileReport {
    let name = path.display().to_string();
    let failed = |error: String| FileReport {
        file: name.clone(),
        messages: 0,
        error: Some(error),
        findings: Vec::new(),
    };
    let text = match read(path) {
        Ok(text) => text,
        Err(e) => return failed(format!("cannot read: {e}")),
    };
    let document = match document::parse(&text) {
        Ok(document) => document,
        Err(e) => return failed(format!("not JSON: {e}")),
    };
    FileReport {
        file: name.clone(),
        messages: document.messages.len(),
        error: None,
        findings: check_document(&document, interface),
    }
}

fn check_document(document: &Document, interface: Option<Interface>) -> Vec<Located> {
    let locate = |i: usize, finding: Finding| Located {
        index: document.is_sequence().then_some(i),
        line: (document.layout == Layout::Lines).then(|| document.messages[i].line),
        pointer: finding.pointer.clone(),
        requirement: finding.requirement.to_string(),
        check: finding.check.to_string(),
        level: finding.level(),
        message: finding.message,
    };
    if !document.is_sequence() {
        let message = &document.messages[0].value;
        return check_message(message, interface)
            .findings
            .into_iter()
            .map(|f| locate(0, f))
            .collect();
    }
    let values = document.values();
    let mut report = check_sequence(&values);
    if interface.is_some() {
        // The caller knows the interface: the message level is checked as that interface.
        for (i, message) in values.iter().enumerate() {
            let others = report.messages[i]
                .iter()
                .filter(|f| f.level() != crate::protocol::conformance::Level::Message)
                .cloned();
            let mut findings = check_message(message, interface).findings;
            findings.extend(others);
            report.messages[i] = findings;
        }
    }
    report
        .messages
        .into_iter()
        .enumerate()
        .flat_map(|(i, findings)| findings.into_iter().map(move |f| (i, f)))
        .map(|(i, f)| locate(i, f))
        .collect()
}

fn print_text(reports: &[FileReport], summary: &Summary) {
    for report in reports {
        if let Some(error) = &report.error {
            println!("{}: {error}", report.file);
            continue;
        }
        for f in &report.findings {
            let place = match (f.line, f.index) {
                (Some(line), _) => format!("{}:{line}", report.file),
                _ => report.file.clone(),
            };
            let pointer = match (f.line, f.index) {
                (None, Some(index)) => format!("/{index}{}", f.pointer),
                _ if f.pointer.is_empty() => "/".to_owned(),
                _ => f.pointer.clone(),
            };
            println!(
                "{place}: {pointer}: {} [{}, {}]",
                f.message, f.requirement, f.check
            );
        }
    }
    let files = plural(summary.files, "file");
    let messages = plural(summary.messages, "message");
    let mut line = format!("checked {messages} in {files}: ");
    if summary.conforms {
        line.push_str("all conform");
    } else {
        let mut parts = Vec::new();
        if summary.findings > 0 {
            parts.push(plural(summary.findings, "finding"));
        }
        if summary.unreadable > 0 {
            parts.push(format!(
                "{} could not be read",
                plural(summary.unreadable, "file")
            ));
        }
        line.push_str(&parts.join(", "));
    }
    println!("{line}");
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}
