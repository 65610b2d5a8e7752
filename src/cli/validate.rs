//! `bkn-explorer validate FILE...`: checks messages against the specification.
//!
//! A file holds one message, a JSON array of messages, or JSON Lines; a sequence is also
//! checked as one dialogue, in order. A session file (the explorer's, or what `dialogue
//! --save` writes) is checked dialogue by dialogue, turn by turn, knowing which Requests the
//! server rejected. What `dialogue` writes (a line per exchange) is judged exchange by
//! exchange, as one dialogue. Files are read as streams: memory holds the dialogue state and one
//! message, whatever the size of the file. The other files this program writes are
//! recognised: a resource is checked against its schema, a scenario as `test` reads it, and
//! what holds no message (a certify or JUnit report, an exported command line) is named and
//! skipped, neither conforming nor failing. Exit 0 when everything conforms, 1 when something
//! does not, 2 when a file cannot be read or parsed, wholly or in part (a journal with a
//! damaged line: its other lines are checked and their findings said, but no verdict on
//! the whole recording can be given).

use super::exit;
use crate::protocol::Interface;
use crate::protocol::conformance::{Finding, SequenceChecker, TurnReply, check_message};
use crate::protocol::document::{Layout, Located as Message, Reader};
use crate::session::stream::{self, StreamedReply};
use clap::ValueEnum;
use serde::Serialize;
use std::io::{BufRead, BufReader, Read, Write};
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

/// What a file was read as (the `kind` of `--format json`'s report).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum FileKind {
    /// One message.
    Message,
    /// A JSON array of messages.
    Array,
    /// JSON Lines of messages.
    Lines,
    /// A JSON document that is no message (a resource...).
    Document,
    /// A servers file.
    Servers,
    /// A file of this program's that holds no message: named and skipped.
    Skipped,
    /// A scenario, checked as `test` reads it.
    Scenario,
    /// What `dialogue` writes: a line per exchange.
    Exchanges,
    /// A session file or a proxy's recording.
    Session,
}

/// The result for one file.
#[derive(Serialize)]
struct FileReport {
    file: String,
    /// What the file was read as: message, array, lines, session or exchanges (the output of
    /// `dialogue`).
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<FileKind>,
    messages: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    /// A document that is no message, said as what it is: "a dac://spaces resource (checked
    /// against its schema: ok)".
    #[serde(skip_serializing_if = "Option::is_none")]
    document: Option<String>,
    /// For a session: the commands replaying or continuing it would start (each run only
    /// with the user's consent), "server: command line".
    #[serde(skip_serializing_if = "Vec::is_empty")]
    commands: Vec<String>,
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
    /// In a session: the dialogue and the turn (0-based), and which message of the turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    dialogue: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    turn: Option<usize>,
    /// In `dialogue`'s output: the exchange (its number there, 0-based).
    #[serde(skip_serializing_if = "Option::is_none")]
    exchange: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    on: Option<&'static str>,
    pointer: String,
    requirement: String,
    check: String,
    level: crate::protocol::conformance::Level,
    message: String,
}

impl Located {
    fn new(finding: Finding) -> Located {
        Located {
            index: None,
            line: None,
            dialogue: None,
            turn: None,
            exchange: None,
            on: None,
            pointer: finding.pointer.clone(),
            requirement: finding.requirement.to_string(),
            check: finding.check.to_string(),
            level: finding.level(),
            message: finding.message,
        }
    }

    /// One line of the text output.
    fn text(&self, file: &str) -> String {
        let pointer = if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        };
        let place = match (self.dialogue, self.turn, self.on, self.line, self.index) {
            (Some(d), Some(t), Some(on), _, _) => {
                format!("{file}: dialogue {d} turn {t} {on}: {pointer}")
            }
            (_, _, Some(on), Some(line), _) if self.exchange.is_some() => {
                let n = self.exchange.unwrap_or_default();
                format!("{file}:{line}: exchange {n} {on}: {pointer}")
            }
            (_, _, _, Some(line), _) => format!("{file}:{line}: {pointer}"),
            (_, _, _, None, Some(index)) => format!("{file}: /{index}{}", self.pointer),
            _ => format!("{file}: {pointer}"),
        };
        format!(
            "{place}: {} [{}, {}]",
            self.message, self.requirement, self.check
        )
    }
}

#[derive(Serialize)]
struct Summary {
    files: usize,
    messages: usize,
    findings: usize,
    unreadable: usize,
    /// Files this program wrote that hold no message (a certify report, a JUnit report...).
    skipped: usize,
    /// Scenarios, checked as `test` reads them.
    scenarios: usize,
    conforms: bool,
}

pub fn run(args: Args) -> u8 {
    let text = args.format == Format::Text;
    let mut stdout = std::io::stdout().lock();
    let mut reports = Vec::new();
    for path in &args.files {
        let name = path.display().to_string();
        // Text findings are printed as they are found; JSON is written at the end.
        let mut print = |l: &Located| {
            if text {
                let _ = writeln!(stdout, "{}", l.text(&name));
            }
        };
        let report = check_file(path, args.interface, !text, &mut print);
        if text && let Some(error) = &report.error {
            let _ = writeln!(stdout, "{name}: {error}");
        }
        if text && let Some(document) = &report.document {
            let _ = writeln!(stdout, "{name} is {document}");
        }
        if text && !report.commands.is_empty() {
            let _ = writeln!(
                stdout,
                "{name}: replaying or continuing it would start (only with your consent):"
            );
            for c in &report.commands {
                let _ = writeln!(stdout, "  {c}");
            }
        }
        reports.push(report);
    }
    let summary = Summary {
        files: reports.len(),
        messages: reports.iter().map(|r| r.messages).sum(),
        findings: reports.iter().map(|r| r.findings_seen).sum(),
        unreadable: reports.iter().filter(|r| r.report.error.is_some()).count(),
        skipped: reports
            .iter()
            .filter(|r| r.report.kind == Some(FileKind::Skipped))
            .count(),
        scenarios: reports
            .iter()
            .filter(|r| r.report.kind == Some(FileKind::Scenario))
            .count(),
        conforms: reports
            .iter()
            .all(|r| r.report.error.is_none() && r.findings_seen == 0),
    };
    let reports: Vec<FileReport> = reports.into_iter().map(|r| r.report).collect();
    match args.format {
        Format::Text => print_summary(&mut stdout, &summary),
        Format::Json => {
            let out = serde_json::json!({"files": reports, "summary": summary});
            let _ = writeln!(
                stdout,
                "{}",
                serde_json::to_string_pretty(&out).unwrap_or_default()
            );
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

/// A file's report and how many findings it had (the findings themselves are dropped once
/// printed, in the text format).
struct Checked {
    report: FileReport,
    findings_seen: usize,
}

impl std::ops::Deref for Checked {
    type Target = FileReport;
    fn deref(&self) -> &FileReport {
        &self.report
    }
}

impl std::ops::DerefMut for Checked {
    fn deref_mut(&mut self) -> &mut FileReport {
        &mut self.report
    }
}

fn open(path: &PathBuf) -> std::io::Result<Box<dyn Read>> {
    if path.as_os_str() == "-" {
        Ok(Box::new(std::io::stdin()))
    } else {
        Ok(Box::new(std::fs::File::open(path)?))
    }
}

/// Checks one file; `keep` keeps the findings in the report (for JSON output), else they are
/// only printed and counted.
fn check_file(
    path: &PathBuf,
    interface: Option<Interface>,
    keep: bool,
    print: &mut dyn FnMut(&Located),
) -> Checked {
    let mut out = Checked {
        report: FileReport {
            file: path.display().to_string(),
            kind: None,
            messages: 0,
            error: None,
            document: None,
            commands: Vec::new(),
            findings: Vec::new(),
        },
        findings_seen: 0,
    };
    let mut source = match open(path) {
        Ok(s) => BufReader::with_capacity(256 * 1024, s),
        Err(e) => {
            out.error = Some(format!("cannot read: {e}"));
            return out;
        }
    };
    let (session, journal) = match source.fill_buf() {
        Ok(head) => (
            stream::looks_like_session(head),
            crate::session::journal::looks_like_journal(head),
        ),
        Err(e) => {
            out.error = Some(format!("cannot read: {e}"));
            return out;
        }
    };
    let mut found = |out: &mut Checked, located: Located| {
        print(&located);
        out.findings_seen += 1;
        if keep {
            out.findings.push(located);
        }
    };
    if let Some(kind) = not_json(head_of(&mut source)) {
        check_not_json(kind, source, &mut out);
    } else if session || journal {
        check_session(source, journal, interface, &mut out, &mut found);
    } else if looks_like_exchanges(head_of(&mut source)) {
        check_exchanges(source, interface, &mut out, &mut found);
    } else {
        check_messages(source, interface, &mut out, &mut found);
    }
    out
}

type Found<'a> = dyn FnMut(&mut Checked, Located) + 'a;

/// A file of messages: one, an array, or JSON Lines, read one message at a time.
fn check_messages(
    source: impl Read,
    interface: Option<Interface>,
    out: &mut Checked,
    found: &mut Found,
) {
    let mut reader = Reader::new(source);
    let mut sequence = SequenceChecker::new(interface);
    // The first message waits until the second shows whether the file is a sequence.
    let mut first: Option<Message> = None;
    let mut index = 0usize;
    let mut layout = None;
    let mut check = |message: &Message, index: usize, layout: Layout, out: &mut Checked| {
        for f in sequence.message_read(&message.value, &message.irregular) {
            let mut l = Located::new(f);
            l.index = Some(index);
            l.line = (layout == Layout::Lines).then_some(message.line);
            found(out, l);
        }
    };
    while let Some(next) = reader.next() {
        let message = match next {
            Ok(m) => m,
            Err(e) => {
                out.error = Some(format!("not JSON: {e}"));
                return;
            }
        };
        out.messages += 1;
        layout = reader.layout().or(layout);
        match (first.take(), layout) {
            (None, None) => first = Some(message),
            (Some(earlier), Some(l)) => {
                check(&earlier, 0, l, out);
                check(&message, 1, l, out);
                index = 2;
            }
            (None, Some(l)) => {
                check(&message, index, l, out);
                index += 1;
            }
            (Some(_), None) => unreachable!("a second message makes the layout known"),
        }
    }
    if out.messages == 0 {
        out.error = Some(match reader.layout() {
            Some(Layout::Array) => "an empty array: no message in it".into(),
            _ => "not JSON: line 1, column 1: no message in the file (it is empty)".into(),
        });
        return;
    }
    out.kind = Some(match reader.layout() {
        Some(Layout::Array) => FileKind::Array,
        Some(Layout::Lines) => FileKind::Lines,
        _ => FileKind::Message,
    });
    if let Some(only) = first {
        check_single(only, interface, out, found);
    }
}

/// A file that held one message: a session whose keys were reordered, a document this program
/// writes that is not a message, or the message, checked alone.
fn check_single(only: Message, interface: Option<Interface>, out: &mut Checked, found: &mut Found) {
    if only
        .value
        .get("format")
        .and_then(serde_json::Value::as_str)
        .is_some_and(|f| f.starts_with(crate::session::FORMAT_PREFIX))
    {
        // A session whose keys were reordered (format not first): it is read whole.
        let text = serde_json::to_vec(&only.value).unwrap_or_default();
        out.messages = 0;
        check_session(&text[..], false, interface, out, found);
        return;
    }
    if let Some(what) = not_a_message(&only.value) {
        out.messages = 0;
        out.kind = Some(FileKind::Document);
        said_of_document(what, out);
        return;
    }
    let ijson =
        crate::protocol::conformance::ijson_findings(&only.value, &only.irregular, interface);
    for f in ijson
        .into_iter()
        .chain(check_message(&only.value, interface).findings)
    {
        found(out, Located::new(f));
    }
}

/// What `validate` says of a document that is not a message: a resource checked against its
/// schema, or a certify report (nothing to validate).
fn said_of_document(what: Document, out: &mut Checked) {
    match what {
        Document::Resource(shape, broken) if broken.is_empty() => {
            out.document = Some(format!(
                "a {} resource (checked against its schema: ok)",
                shape.uri()
            ));
        }
        Document::Resource(shape, broken) => {
            out.findings_seen += broken.len();
            out.document = Some(format!(
                "a {} resource, and it breaks its schema (docs/resources/{}.schema.json): {}",
                shape.uri(),
                shape.name(),
                broken
                    .iter()
                    .map(|(at, m)| format!("{}: {m}", if at.is_empty() { "/" } else { at }))
                    .collect::<Vec<_>>()
                    .join("; ")
            ));
        }
        Document::CertifyReport => skipped(
            out,
            "a certify report (`certify --format json` or the certify pane's J; not messages)",
        ),
        Document::Scenario(text) => said_of_scenario(&text, out),
        Document::Servers(text) => {
            out.kind = Some(FileKind::Servers);
            match crate::client::spec::parse_servers(&text) {
                Ok(servers) => {
                    out.document = Some(format!(
                        "a servers file ({}; read as the commands' --servers reads it: ok)",
                        plural(servers.len(), "server")
                    ));
                }
                Err(e) => {
                    out.findings_seen += 1;
                    out.document = Some(format!(
                        "a servers file, and --servers would refuse it: {e}"
                    ));
                }
            }
        }
        Document::Schema => skipped(
            out,
            "a JSON Schema (`bkn-explorer schema`; it describes messages, it is not one)",
        ),
        Document::Other(format) => skipped(
            out,
            &format!("a {format} file written by bkn-explorer (not messages)"),
        ),
    }
}

/// A file this program writes that holds no message and has no schema of its own: said as
/// what it is, and skipped (it neither conforms nor fails).
fn skipped(out: &mut Checked, what: &str) {
    out.kind = Some(FileKind::Skipped);
    out.document = Some(format!("{what}: skipped"));
}

/// A scenario (`test`'s YAML or JSON file): checked as `test` reads it, each mistake a
/// finding with its line.
fn said_of_scenario(text: &str, out: &mut Checked) {
    out.kind = Some(FileKind::Scenario);
    let path = std::path::Path::new(&out.report.file).to_owned();
    let run = if path.as_os_str() == "-" {
        "save it and run it with `bkn-explorer test FILE`".to_owned()
    } else {
        format!("run it with `bkn-explorer test {}`", path.display())
    };
    match crate::scenario::parse(text, &path) {
        Ok(scenario) => {
            out.document = Some(format!(
                "a scenario ({} step{}; checked as a scenario: ok): {run}",
                scenario.steps.len(),
                if scenario.steps.len() == 1 { "" } else { "s" }
            ));
        }
        Err(mistakes) => {
            out.findings_seen += mistakes.len();
            let said: Vec<String> = mistakes
                .iter()
                .map(|m| match &m.place {
                    Some(p) => format!("line {}, column {}: {}", p.line, p.column, m.message),
                    None => m.message.clone(),
                })
                .collect();
            out.document = Some(format!(
                "a scenario, and `test` would refuse it: {}; fix it, then {run}",
                said.join("; ")
            ));
        }
    }
}

/// Files this program writes that are not JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NotJson {
    /// A scenario in YAML (`test --from-session -o`, or written by hand).
    Scenario,
    /// `certify --format markdown` (or the certify pane's Markdown).
    CertifyMarkdown,
    /// `test --junit`.
    Junit,
    /// A turn exported as a command line (`bkn-explorer send`, or curl).
    CommandLine,
}

/// What a file that does not start as JSON is, when this program wrote it.
fn not_json(head: &[u8]) -> Option<NotJson> {
    let text = String::from_utf8_lossy(&head[..head.len().min(64 * 1024)]);
    let text = text.trim_start_matches('\u{feff}').trim_start();
    if text.is_empty() || text.starts_with('{') || text.starts_with('[') {
        return None;
    }
    if text.starts_with("# BKN conformance report") {
        return Some(NotJson::CertifyMarkdown);
    }
    if text.starts_with("<?xml") && text.contains("<testsuites") || text.starts_with("<testsuites")
    {
        return Some(NotJson::Junit);
    }
    if exported_command_line(text) {
        return Some(NotJson::CommandLine);
    }
    // A YAML mapping with the scenario's one required member at its top level.
    text.lines()
        .any(|l| l.starts_with("steps:"))
        .then_some(NotJson::Scenario)
}

/// Whether a text begins as the explorer's export writes a turn (`tui::export::lines`): the
/// `send` line, or the curl lines of either generation. (Only their first lines: a text that
/// merely mentions `bkn-explorer send` is not one.)
fn exported_command_line(text: &str) -> bool {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default();
    (first.starts_with("printf '%s\\n' ") && first.contains(" | bkn-explorer send"))
        || first.starts_with("DIALOG=bkn-curl-")
        || (first.starts_with("URL=") && lines.next().is_some_and(|l| l.starts_with("SID=$(curl ")))
}

/// A file `not_json` recognised: a scenario is checked as one, the others are skipped.
fn check_not_json(kind: NotJson, mut source: impl Read, out: &mut Checked) {
    match kind {
        NotJson::Scenario => {
            let mut text = String::new();
            match source.read_to_string(&mut text) {
                Ok(_) => said_of_scenario(&text, out),
                Err(e) => out.error = Some(format!("cannot read: {e}")),
            }
        }
        NotJson::CertifyMarkdown => skipped(
            out,
            "a certify report in Markdown (`certify --format markdown`; not messages)",
        ),
        NotJson::Junit => skipped(out, "a JUnit report (`test --junit`; not messages)"),
        NotJson::CommandLine => skipped(
            out,
            "a turn exported as a command line (the explorer's export; not messages)",
        ),
    }
}

/// A JSON document this program writes that is not a message.
enum Document {
    /// A resource (as the explorer's `W` or `read -o` writes it), and where it breaks its
    /// schema.
    Resource(crate::protocol::resources::Shape, Vec<(String, String)>),
    /// `certify --format json`'s report.
    CertifyReport,
    /// A scenario written as JSON, as its text.
    Scenario(String),
    /// Another file of this program's (its `format`, e.g. a Locust export's scenarios).
    Other(String),
    /// A servers file (`mcpServers`, or VS Code's `servers`), as its text.
    Servers(String),
    /// A JSON Schema (`bkn-explorer schema`).
    Schema,
}

/// What a single JSON document is when it is no message: judging it as a Request would give
/// a finding for every member a message has and it has not.
fn not_a_message(value: &serde_json::Value) -> Option<Document> {
    if let Some(shape) = crate::protocol::resources::Shape::of_document(value) {
        return Some(Document::Resource(shape, shape.check(value)));
    }
    let report = value.get("rules").is_some_and(serde_json::Value::is_array)
        && ["passed", "failed", "skipped", "interface"]
            .iter()
            .all(|k| value.get(k).is_some());
    if report {
        return Some(Document::CertifyReport);
    }
    let object = value.as_object()?;
    if object.get("steps").is_some_and(serde_json::Value::is_array)
        && !object.contains_key("Header")
    {
        return Some(Document::Scenario(value.to_string()));
    }
    if !object.contains_key("Header") {
        if object
            .get("mcpServers")
            .is_some_and(serde_json::Value::is_object)
            || object
                .get("servers")
                .is_some_and(serde_json::Value::is_object)
        {
            return Some(Document::Servers(value.to_string()));
        }
        if object
            .get("$schema")
            .and_then(serde_json::Value::as_str)
            .is_some_and(|s| s.contains("json-schema.org"))
        {
            return Some(Document::Schema);
        }
    }
    object
        .get("format")
        .and_then(serde_json::Value::as_str)
        .filter(|f| f.starts_with("bkn-explorer-"))
        .map(|f| Document::Other(f.to_owned()))
}

fn head_of(source: &mut impl BufRead) -> &[u8] {
    source.fill_buf().unwrap_or_default()
}

/// Whether a file starts as `dialogue`'s output does: a JSON line whose first member is
/// `exchange`.
fn looks_like_exchanges(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(&head[..head.len().min(512)]);
    let text = text.trim_start_matches('\u{feff}').trim_start();
    text.strip_prefix('{')
        .is_some_and(|rest| rest.trim_start().starts_with("\"exchange\""))
}

/// What `dialogue` writes: one line per exchange, the Request as sent and its reply. Each
/// exchange is judged again (the Request, the Response, and the two as a turn of one
/// dialogue), not the lines themselves, which are no BKN messages.
fn check_exchanges(
    source: impl Read,
    interface: Option<Interface>,
    out: &mut Checked,
    found: &mut Found,
) {
    out.kind = Some(FileKind::Exchanges);
    let mut verdicts = crate::session::check::Verdicts::new(interface);
    let mut without_request = 0usize;
    for next in Reader::new(source) {
        let line = match next {
            Ok(m) => m,
            Err(e) => {
                out.error = Some(format!("not JSON: {e}"));
                return;
            }
        };
        let value = &line.value;
        let Some(exchange) = value.get("exchange").and_then(serde_json::Value::as_u64) else {
            out.error = Some(format!(
                "line {}: not a line of `bkn-explorer dialogue` output (no exchange number), \
                 though the file starts as one",
                line.line
            ));
            return;
        };
        let exchange = usize::try_from(exchange).unwrap_or(usize::MAX);
        let response = value.get("response");
        let reply = match response {
            Some(r) => TurnReply::Response(r),
            None if value.get("toolError").is_some() => TurnReply::Rejected,
            None => TurnReply::Nothing,
        };
        let mut report = |on: &'static str, findings: Vec<Finding>, out: &mut Checked| {
            for f in findings {
                let mut l = Located::new(f);
                l.line = Some(line.line);
                l.exchange = Some(exchange);
                l.on = Some(on);
                found(out, l);
            }
        };
        match value.get("request") {
            Some(request) => {
                out.messages += 1 + usize::from(response.is_some());
                let given = crate::protocol::conformance::interface_of(request);
                let findings = verdicts.turn(0, None, given, false, request, reply);
                report("request", findings.request.into_iter().collect(), out);
                report("response", findings.response.into_iter().collect(), out);
            }
            // Written by a `dialogue` that did not keep the Request: its Response can only
            // be checked alone.
            None => {
                without_request += 1;
                if let Some(r) = response {
                    out.messages += 1;
                    report("response", check_message(r, interface).findings, out);
                }
            }
        }
    }
    if without_request > 0 {
        eprintln!(
            "note: {without_request} line(s) of this `dialogue` output hold no Request (an older \
             bkn-explorer wrote them): their Responses were checked alone, not as a dialogue; \
             `dialogue --save SESSION` keeps a file that `validate` judges whole"
        );
    }
    if out.messages == 0 && without_request == 0 {
        out.error = Some("no exchange in the file".into());
    }
}

/// A session file: each dialogue's turns in order, each dialogue on its own, a new MCP
/// session of a dialogue (a reconnect) starting its dialogue rules afresh.
fn check_session(
    source: impl std::io::BufRead,
    journal: bool,
    interface: Option<Interface>,
    out: &mut Checked,
    found: &mut Found,
) {
    out.kind = Some(FileKind::Session);
    // A journal's dialogues interleave (each keeps its state until its `closed` line).
    let verdicts = std::cell::RefCell::new(if journal {
        crate::session::check::Verdicts::interleaved(interface)
    } else {
        crate::session::check::Verdicts::new(interface)
    });
    let mut each = |t: stream::StreamedTurn| {
        out.messages += 1 + usize::from(matches!(t.reply, StreamedReply::Response(_)));
        let findings = verdicts.borrow_mut().streamed(&t);
        // How the Response travelled (MCP-BINDING section 1), as the recording kept it: the
        // messages alone cannot show it again.
        let response = findings.response.into_iter().chain(t.binding);
        for (on, list) in [
            ("request", findings.request.into_iter().collect::<Vec<_>>()),
            ("response", response.collect()),
        ] {
            for f in list {
                let mut l = Located::new(f);
                l.dialogue = Some(t.dialogue);
                l.turn = Some(t.turn);
                l.on = Some(on);
                found(out, l);
            }
        }
    };
    let result = if journal {
        // A recording cut off in its last line (an exchange in flight) is read up to its
        // last whole line, and the note says so. A damaged line before the end (a write torn
        // by a full disk) is skipped and the lines after it checked, but the file is then
        // partly unreadable: an error (exit 2) that names each line, since its verdict is not
        // the whole recording's.
        let mut closed = |d: usize| verdicts.borrow_mut().close(d);
        crate::session::journal::for_each_turn(source, &mut each, &mut closed).and_then(|reading| {
            for n in &reading.notes {
                eprintln!("note: {n}");
            }
            if reading.damaged.is_empty() {
                return Ok(());
            }
            Err(stream::StreamError::NotSession(format!(
                "partly unreadable, the rest was checked: {}",
                reading.damaged.join("; ")
            )))
        })
    } else {
        stream::for_each_turn(source, &mut each).map(|servers| {
            // What replaying or continuing it would start: a session file never starts a
            // command without consent, and the user reading it should know what it names.
            for spec in servers {
                if let Some(command) = spec.command_it_runs() {
                    out.commands.push(format!("{}: {command}", spec.name));
                }
            }
        })
    };
    if let Err(e) = result {
        out.error = Some(e.to_string());
    }
}

fn print_summary(out: &mut impl Write, summary: &Summary) {
    let files = plural(summary.files, "file");
    let messages = plural(summary.messages, "message");
    let mut aside = Vec::new();
    if summary.scenarios > 0 {
        aside.push(plural(summary.scenarios, "scenario"));
    }
    if summary.skipped > 0 {
        aside.push(format!(
            "{} skipped: no messages in {}",
            summary.skipped,
            if summary.skipped == 1 { "it" } else { "them" }
        ));
    }
    let aside = if aside.is_empty() {
        String::new()
    } else {
        format!(" ({})", aside.join("; "))
    };
    let mut line = format!("checked {messages} in {files}{aside}: ");
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
    let _ = writeln!(out, "{line}");
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An export is known by its first lines, as `tui::export::lines` writes them; a text that
    /// only mentions the command is no export (it stays "not JSON", an error).
    #[test]
    fn exported_command_lines_are_known_by_their_first_lines() {
        let send =
            "printf '%s\\n' '{\"Kind\":\"constraints\"}' | bkn-explorer send - --stdio 'x'\n";
        let curl_2026 = "DIALOG=bkn-curl-$(date +%s)-$$\ncurl -sS \"$URL\" --data-binary x\n";
        let curl_2025 = "URL=http://127.0.0.1:1/mcp\nSID=$(curl -sS -D - -o /dev/null \"$URL\")\n";
        for text in [send, curl_2026, curl_2025] {
            assert_eq!(
                not_json(text.as_bytes()),
                Some(NotJson::CommandLine),
                "{text}"
            );
        }
        let readme = "# Notes\nRun `bkn-explorer send request.json` to try it.\n";
        assert_eq!(not_json(readme.as_bytes()), None);
        assert_eq!(not_json(b"URL=x\nnothing else\n"), None);
    }
}
