//! The rules: one table, each with its stable id (what `--only`, JSON, JUnit and CI rely on),
//! the binding section it comes from, its family and the interface it applies to.

use crate::protocol::Interface;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    Tools,
    Turns,
    Feasibility,
    Commitments,
    Dialogues,
    Determinism,
    Robustness,
    Usr,
}

impl Family {
    pub fn name(self) -> &'static str {
        match self {
            Family::Tools => "Tools and shapes",
            Family::Turns => "Correlation and turns",
            Family::Feasibility => "Feasibility",
            Family::Commitments => "Commitments",
            Family::Dialogues => "Dialogues and generations",
            Family::Determinism => "Determinism and metamorphic properties",
            Family::Robustness => "Robustness",
            Family::Usr => "BKN-USR",
        }
    }
}

/// Which interfaces a rule applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applies {
    Both,
    Only(Interface),
}

macro_rules! rules {
    ($($variant:ident = $id:literal, $section:literal, $family:ident, $applies:expr, $title:literal;)*) => {
        /// A rule's identity.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum RuleId { $($variant,)* }

        /// Every rule, in the order they run.
        pub static RULES: &[Rule] = &[
            $(Rule { id: RuleId::$variant, name: $id, section: $section, family: Family::$family,
                     applies: $applies, title: $title },)*
        ];
    };
}

const DAC: Applies = Applies::Only(Interface::Dac);
const USR: Applies = Applies::Only(Interface::Usr);
const BOTH: Applies = Applies::Both;

rules! {
    ToolFound = "tools.found-by-header", "MCP-BINDING 1", Tools, BOTH,
        "the interface's tool is found by the Header const of its inputSchema";
    ToolOutputSchema = "tools.output-schema", "MCP-BINDING 1", Tools, BOTH,
        "the tool declares an outputSchema";
    ShapesEveryKind = "shapes.every-kind", "MCP-BINDING 1, 6; Conformance Testing", Tools, BOTH,
        "every Kind of Request is answered with a conformant Response";
    ShapesStructured = "shapes.structured-content", "MCP-BINDING 1", Tools, BOTH,
        "a Response comes as structuredContent and the same JSON in one text block";
    ShapesToolError = "shapes.tool-error", "MCP-BINDING 2", Tools, BOTH,
        "a non-conformant Request gets a tool error listing each violation as pointer: message";
    RpcNonJson = "rpc.non-json", "MCP-BINDING 2", Tools, BOTH,
        "input that is not JSON gets a JSON-RPC error (-32700 with id null over stdio; a 4xx with a JSON-RPC body over HTTP)";
    TurnsCopied = "turns.copied-fields", "MCP-BINDING 3", Turns, BOTH,
        "a Response copies DialogID, TurnIndex, MInstance, UEnvironment and SessionID, has a new QueryID and RequestID = the Request's QueryID";
    TurnsRepeat = "turns.repeated-index", "MCP-BINDING 3", Turns, BOTH,
        "a TurnIndex given again is refused with a tool error";
    TurnsBack = "turns.going-back", "MCP-BINDING 3", Turns, BOTH,
        "a TurnIndex below the last accepted one is refused with a tool error";
    TurnsGap = "turns.gaps", "MCP-BINDING 3", Turns, BOTH,
        "a TurnIndex that skips numbers is accepted";
    TurnsDialogId = "turns.dialog-id", "MCP-BINDING 3", Turns, BOTH,
        "within an MCP session, a Request with another DialogID is refused";
    TurnsRejected = "turns.rejected-changes-nothing", "MCP-BINDING 2, 3", Turns, BOTH,
        "a refused Request changes nothing: its TurnIndex stays free, its commitments unseen";
    FeasSteps = "feasibility.steps", "MCP-BINDING 5", Feasibility, DAC,
        "one step per Process Action with the same Step numbers; no Feasibility without Process Actions";
    FeasOverall = "feasibility.overall", "MCP-BINDING 5", Feasibility, DAC,
        "Overall is feasible, partially_feasible or infeasible as the steps say";
    FeasReason = "feasibility.reason", "MCP-BINDING 5", Feasibility, DAC,
        "each non-Ack step has a Reason";
    FeasAck = "feasibility.ack", "MCP-BINDING 5", Feasibility, DAC,
        "a move the published domain allows is Ack";
    FeasFaultyReq = "feasibility.faultyreq", "MCP-BINDING 5", Feasibility, DAC,
        "a statement that does not parse, names no Action or lacks a needed complement is FaultyReq";
    FeasTargetKind = "feasibility.target-kind", "MCP-BINDING 5", Feasibility, DAC,
        "a target of the wrong kind, or the same complement twice, is FaultyReq";
    FeasIncId = "feasibility.incid", "MCP-BINDING 5", Feasibility, DAC,
        "an ID unknown in the Space is IncID";
    FeasIncDq = "feasibility.incdq", "MCP-BINDING 5", Feasibility, DAC,
        "a Data Qualifier that does not match the Item's is IncDQ";
    FeasLocOtherSpace = "feasibility.locoor-other-space", "MCP-BINDING 5", Feasibility, DAC,
        "an M-Location of another Space than the Request's is LocOOR";
    FeasLocReach = "feasibility.locoor-reach", "MCP-BINDING 5", Feasibility, DAC,
        "an M-Location of a Space out of the requester's reach is LocOOR";
    FeasInsRights = "feasibility.insrights", "MCP-BINDING 5", Feasibility, DAC,
        "an Action the requester May Not do is InsRights";
    FeasInsValue = "feasibility.insvalue", "MCP-BINDING 5", Feasibility, DAC,
        "a plan that spends more than the wallet is InsValue at the step that overspends";
    FeasQualNs = "feasibility.qualns", "MCP-BINDING 5", Feasibility, DAC,
        "a Post of an Item in a format the receiving Process does not take is QualNS";
    FeasPostRef = "feasibility.postref", "MCP-BINDING 5", Feasibility, DAC,
        "a Post to a Process that takes no Item of that class is PostRef";
    FeasClashState = "feasibility.clash-state", "MCP-BINDING 5", Feasibility, DAC,
        "a step the state contradicts (From where the Item is not) is Clash";
    FeasSequence = "feasibility.sequence", "MCP-BINDING 5", Feasibility, DAC,
        "steps are judged in Step order against the state the earlier ones leave; a non-Ack step changes nothing";
    CommitRetain = "commitments.retain", "MCP-BINDING 4", Commitments, DAC,
        "a commitment is retained, and stays retained in every later Response";
    CommitRelease = "commitments.release", "MCP-BINDING 4", Commitments, DAC,
        "a released commitment is released in that Response and stays so";
    CommitRestate = "commitments.restate", "MCP-BINDING 4", Commitments, DAC,
        "a released commitment stated again is retained again";
    CommitConflictRetained = "commitments.conflict-retained", "MCP-BINDING 4", Commitments, DAC,
        "a statement contradicting a retained commitment is conflicting, never both retained";
    CommitConflictRequest = "commitments.conflict-in-request", "MCP-BINDING 4", Commitments, DAC,
        "two contradicting statements of one Request are never both retained";
    CommitConflictDomain = "commitments.conflict-domain", "MCP-BINDING 4", Commitments, DAC,
        "a statement contradicting the published domain is conflicting";
    CommitUnknownRelease = "commitments.unknown-release", "MCP-BINDING 4", Commitments, DAC,
        "releasing an unknown CommitmentID changes nothing and lists nothing";
    CommitOpaque = "commitments.opaque", "MCP-BINDING 4", Commitments, DAC,
        "a statement that is not a triple is retained as opaque text and never conflicts";
    CommitClash = "commitments.clash", "MCP-BINDING 4", Commitments, DAC,
        "a step that would break a retained commitment is Clash";
    CommitIsolation = "commitments.isolation", "MCP-BINDING 3, 4", Commitments, DAC,
        "two dialogues open at once never see each other's commitments";
    DialogLifetime = "dialogues.lifetime", "MCP-BINDING 3", Dialogues, BOTH,
        "a dialogue's state lives as long as the binding says in the generation spoken";
    DialogUnknown = "dialogues.unknown-dialogue", "MCP-BINDING 3", Dialogues, BOTH,
        "a later turn of a dialogue the server does not hold is refused (2026-07-28)";
    DialogGenerations = "dialogues.generations", "MCP-BINDING 3", Dialogues, BOTH,
        "the same Requests give the same answers in both MCP generations";
    DetRepeat = "determinism.repeat", "MCP-BINDING 3", Determinism, BOTH,
        "the same dialogue twice gives the same answers (volatile fields aside)";
    DetStepOrder = "determinism.step-order", "MCP-BINDING 5", Determinism, DAC,
        "the order in which steps are listed does not change their verdicts";
    DetUnrelated = "determinism.unrelated-commitment", "MCP-BINDING 4, 5", Determinism, DAC,
        "a retained commitment unrelated to a plan does not change its verdicts";
    DetConcurrent = "determinism.concurrent", "MCP-BINDING 3", Determinism, BOTH,
        "N dialogues at once give the answers they give one at a time";
    RobJunk = "robustness.junk", "MCP-BINDING 2", Robustness, BOTH,
        "junk input does not kill the server: it answers afterwards";
    RobOversized = "robustness.oversized", "MCP-BINDING 2", Robustness, BOTH,
        "an oversized Request does not kill the server: it answers a normal Request afterwards";
    RobDeep = "robustness.deep", "MCP-BINDING 6", Robustness, BOTH,
        "a Request nested 900 levels is answered; one nested 1,200 levels does not kill the server";
    UsrShapes = "usr.response-shapes", "MCP-BINDING 6", Usr, USR,
        "Engagement in range, RefinedUserState an object, Provenance {Sources, Method, Evidence?}";
    UsrCarried = "usr.carried", "BKN-USR; MCP-BINDING 3", Usr, USR,
        "the refined User State is carried from turn to turn within a dialogue";
    UsrIsolation = "usr.isolation", "MCP-BINDING 3", Usr, USR,
        "the refined User State never passes from one dialogue to another";
}

/// One rule of the table.
#[derive(Debug)]
pub struct Rule {
    pub id: RuleId,
    /// The stable name, e.g. `commitments.isolation`.
    pub name: &'static str,
    /// Where it comes from, e.g. `MCP-BINDING 4`.
    pub section: &'static str,
    pub family: Family,
    pub applies: Applies,
    /// What it checks, in a sentence.
    pub title: &'static str,
}

impl Rule {
    pub fn applies_to(&self, interface: Interface) -> bool {
        match self.applies {
            Applies::Both => true,
            Applies::Only(i) => i == interface,
        }
    }

    pub fn by_name(name: &str) -> Option<&'static Rule> {
        RULES.iter().find(|r| r.name == name)
    }

    pub fn get(id: RuleId) -> &'static Rule {
        RULES
            .iter()
            .find(|r| r.id == id)
            .expect("every RuleId is in the table")
    }
}

/// The rules `--only` names: a rule's id, or a prefix ending with a dot (`feasibility.`), or
/// a family's first word (`feasibility`). An unknown name is an error that lists the ids.
pub fn select(only: &[String], interface: Interface) -> Result<Vec<&'static Rule>, String> {
    let applicable = RULES.iter().filter(|r| r.applies_to(interface));
    if only.is_empty() {
        return Ok(applicable.collect());
    }
    for name in only {
        let prefix = format!("{}.", name.trim_end_matches('.'));
        if !RULES
            .iter()
            .any(|r| r.name == name || r.name.starts_with(&prefix))
        {
            return Err(format!(
                "--only {name}: no such rule; the rules are {}",
                RULES.iter().map(|r| r.name).collect::<Vec<_>>().join(", ")
            ));
        }
    }
    Ok(applicable
        .filter(|r| {
            only.iter().any(|name| {
                r.name == name
                    || r.name
                        .starts_with(&format!("{}.", name.trim_end_matches('.')))
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_each_variant_is_listed_once() {
        let mut names: Vec<&str> = RULES.iter().map(|r| r.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), RULES.len());
        for r in RULES {
            assert_eq!(Rule::get(r.id).name, r.name);
        }
    }

    #[test]
    fn docs_certify_md_lists_every_rule() {
        let doc = include_str!("../../docs/certify.md");
        for r in RULES {
            assert!(
                doc.contains(&format!("| `{}` | {} |", r.name, r.section)),
                "docs/certify.md does not list {} ({})",
                r.name,
                r.section
            );
        }
    }

    #[test]
    fn only_takes_ids_and_families() {
        let picked = select(&["feasibility".into()], Interface::Dac).unwrap();
        assert!(picked.iter().all(|r| r.name.starts_with("feasibility.")));
        assert!(picked.len() > 5);
        assert!(
            select(&["feasibility".into()], Interface::Usr)
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            select(&["turns.gaps".into()], Interface::Usr)
                .unwrap()
                .len(),
            1
        );
        assert!(select(&["nope".into()], Interface::Dac).is_err());
    }
}
