//! The domain model a Domain Access server answers from: the file format (see
//! `docs/domain.schema.json` and `docs/domain.md`), loading with every mistake reported by
//! its path, and the lookups the answers need.

use crate::protocol::process_action::{ACTIONS, Preposition};
use crate::server::model_file;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::LazyLock;

/// The shipped default domain: a public square.
pub const DEFAULT_DOMAIN: &str = include_str!("public-square.json");
/// The JSON Schema of domain files.
pub const DOMAIN_SCHEMA: &str = include_str!("../../../docs/domain.schema.json");

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DomainFile {
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    pub m_instance: String,
    /// The U-Environment, when the domain names one (clients fill Requests with it).
    #[serde(
        rename = "UEnvironment",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub u_environment: Option<String>,
    #[serde(default)]
    pub label: String,
    #[serde(default)]
    pub description: String,
    pub requester: Requester,
    pub sources: Vec<Source>,
    pub spaces: Vec<Space>,
    pub classes: Vec<Class>,
    pub items: Vec<Item>,
    pub processes: Vec<Process>,
    #[serde(default)]
    pub relations: Vec<Fact>,
    #[serde(default)]
    pub functional_predicates: Vec<String>,
    #[serde(default)]
    pub affordances: Vec<ClassAffordances>,
    #[serde(default)]
    pub constraints: Vec<ScopedText>,
    #[serde(default)]
    pub expectations: Vec<ScopedText>,
    #[serde(default)]
    pub rights: Vec<Right>,
    pub actions: Vec<ActionRule>,
    #[serde(default)]
    pub conversions: BTreeMap<String, Vec<String>>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Requester {
    #[serde(rename = "ProcessID")]
    pub process_id: String,
    pub reach: Vec<String>,
    pub wallet: Wallet,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Wallet {
    pub amount: f64,
    pub currency: String,
}

/// What a knowledge source knows about; a failing source takes that knowledge away.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Classes, labels, synonyms, the class hierarchy.
    Ontology,
    /// Spaces, M-Locations, where Items are, facts about them.
    Scene,
    /// Constraints and behavioural expectations.
    Norms,
    /// The requester's Rights.
    Rights,
    /// The requester's wallet and the prices of Actions.
    Wallet,
    /// The services that receive Posts.
    Services,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Source {
    pub name: String,
    pub role: Role,
    #[serde(default)]
    pub description: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Bounds {
    pub min: [f64; 3],
    pub max: [f64; 3],
}

impl Bounds {
    pub fn contains(&self, point: [f64; 3]) -> bool {
        (0..3).all(|i| self.min[i] <= point[i] && point[i] <= self.max[i])
    }

    pub fn encloses(&self, other: &Bounds) -> bool {
        self.contains(other.min) && self.contains(other.max)
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Space {
    #[serde(rename = "SpaceID")]
    pub space_id: String,
    #[serde(default)]
    pub label: String,
    pub bounds: Bounds,
    #[serde(rename = "MLocations")]
    pub m_locations: Vec<MLocation>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct MLocation {
    #[serde(rename = "MLocationID")]
    pub m_location_id: String,
    #[serde(default)]
    pub label: String,
    pub bounds: Bounds,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub formats: Option<Vec<String>>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Class {
    #[serde(rename = "ClassID")]
    pub class_id: String,
    pub label: String,
    #[serde(default)]
    pub synonyms: Vec<String>,
    #[serde(default)]
    pub superclasses: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Item {
    #[serde(rename = "ItemID")]
    pub item_id: String,
    pub class: String,
    #[serde(default)]
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<String>,
    #[serde(default)]
    pub qualifier: BTreeMap<String, String>,
}

impl Item {
    pub fn format(&self) -> Option<&str> {
        self.qualifier.get("Format").map(String::as_str)
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Process {
    #[serde(rename = "ProcessID")]
    pub process_id: String,
    pub class: String,
    #[serde(default)]
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepts: Option<Accepts>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Accepts {
    pub classes: Vec<String>,
    pub formats: Vec<String>,
}

/// A fact of the domain as a triple.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Fact {
    pub subject: String,
    pub predicate: String,
    pub object: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ClassAffordances {
    pub class: String,
    pub actions: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Scope {
    Entity(String),
    Class(String),
    Space(String),
    #[serde(rename = "MLocation")]
    MLocation(String),
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ScopedText {
    pub scope: Scope,
    pub text: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verb {
    May,
    #[serde(rename = "May Not")]
    MayNot,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Right {
    pub verb: Verb,
    pub action: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
}

/// What an Action does to the simulated state when it is Ack'ed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    /// Puts an unplaced Item at an M-Location (`At`).
    Place,
    /// Moves a placed Item (`From`, `To`).
    Move,
    /// Makes an Item unavailable to later steps.
    Hide,
    /// Hands an Item to a Process (`To`) that accepts it.
    Post,
    /// Hands an Item over to another owner (`To`).
    Transfer,
    /// Changes an Item's format (`With Format=...`).
    Convert,
    /// Animates a placed Item with a Stream (`With`).
    Animate,
    /// Nothing changes.
    None,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ActionRule {
    pub action: String,
    pub effect: Effect,
    #[serde(default)]
    pub requires: Vec<String>,
    #[serde(default)]
    pub price: f64,
}

impl ActionRule {
    pub fn required(&self) -> impl Iterator<Item = Preposition> + '_ {
        self.requires.iter().filter_map(|p| {
            Preposition::ALL
                .into_iter()
                .find(|q| q.as_str() == p.as_str())
        })
    }
}

/// A domain that loaded and checked out, with indexes for the answers.
#[derive(Clone, Debug)]
pub struct Domain {
    pub file: DomainFile,
    classes: HashMap<String, usize>,
    items: HashMap<String, usize>,
    processes: HashMap<String, usize>,
    /// M-Location ID to (space index, location index).
    m_locations: HashMap<String, (usize, usize)>,
    spaces: HashMap<String, usize>,
    actions: HashMap<String, usize>,
}

pub use crate::server::model_file::{FileError as DomainError, Problem};

static SCHEMA_VALIDATOR: LazyLock<jsonschema::Validator> =
    LazyLock::new(|| model_file::compile_schema(DOMAIN_SCHEMA));

impl Domain {
    /// The shipped public-square domain.
    /// The built-in domain, read without the checks a domain file gets: it passes them all
    /// (`the_built_in_domain_passes_every_check` runs them), and compiling the domain file's
    /// schema to check it again was about a millisecond of every server's start (`send`'s
    /// in-process one included).
    pub fn default_domain() -> Domain {
        let file: DomainFile =
            serde_json::from_str(DEFAULT_DOMAIN).expect("the built-in domain is valid (tested)");
        Domain::index(file)
    }

    /// Loads a domain from its text; `origin` names it in errors (usually the path).
    pub fn parse(text: &str, origin: &str) -> Result<Domain, DomainError> {
        const KIND: &str = "domain file";
        let file: DomainFile = model_file::load(text, origin, KIND, &SCHEMA_VALIDATOR)?;
        let domain = Domain::index(file);
        let problems = domain.cross_check();
        if problems.is_empty() {
            Ok(domain)
        } else {
            Err(DomainError::new(origin, KIND, problems))
        }
    }

    fn index(file: DomainFile) -> Domain {
        let by = |ids: Vec<String>| -> HashMap<String, usize> {
            ids.into_iter().enumerate().map(|(i, id)| (id, i)).collect()
        };
        let mut m_locations = HashMap::new();
        for (s, space) in file.spaces.iter().enumerate() {
            for (l, loc) in space.m_locations.iter().enumerate() {
                m_locations.insert(loc.m_location_id.clone(), (s, l));
            }
        }
        Domain {
            classes: by(file.classes.iter().map(|c| c.class_id.clone()).collect()),
            items: by(file.items.iter().map(|i| i.item_id.clone()).collect()),
            processes: by(file
                .processes
                .iter()
                .map(|p| p.process_id.clone())
                .collect()),
            spaces: by(file.spaces.iter().map(|s| s.space_id.clone()).collect()),
            actions: by(file.actions.iter().map(|a| a.action.clone()).collect()),
            m_locations,
            file,
        }
    }

    /// The references between parts of the file, which the schema cannot check.
    fn cross_check(&self) -> Vec<Problem> {
        let mut problems = Vec::new();
        self.check_ids_and_bounds(&mut problems);
        self.check_class_and_place_references(&mut problems);
        self.check_requester_and_sources(&mut problems);
        self.check_affordances(&mut problems);
        self.check_scopes(&mut problems);
        self.check_rights_and_actions(&mut problems);
        self.check_capacities(&mut problems);
        problems
    }

    /// Every ID defined once, across classes, Spaces, M-Locations, Items and Processes;
    /// each M-Location within its Space's bounds, and those bounds the right way round.
    fn check_ids_and_bounds(&self, problems: &mut Vec<Problem>) {
        let f = &self.file;
        let mut problem = |at: String, message: String| problems.push(Problem::new(at, message));
        let mut seen: HashMap<String, String> = HashMap::new();
        let mut unique = |id: &str, at: String, problem: &mut dyn FnMut(String, String)| {
            if let Some(first) = seen.get(id) {
                problem(at, format!("{id} is already defined at {first}"));
            } else {
                seen.insert(id.to_owned(), at);
            }
        };
        for (i, c) in f.classes.iter().enumerate() {
            unique(&c.class_id, format!("/Classes/{i}/ClassID"), &mut problem);
        }
        for (s, space) in f.spaces.iter().enumerate() {
            unique(
                &space.space_id,
                format!("/Spaces/{s}/SpaceID"),
                &mut problem,
            );
            for (l, loc) in space.m_locations.iter().enumerate() {
                let at = format!("/Spaces/{s}/MLocations/{l}");
                unique(
                    &loc.m_location_id,
                    format!("{at}/MLocationID"),
                    &mut problem,
                );
                if !space.bounds.encloses(&loc.bounds) {
                    problem(
                        format!("{at}/Bounds"),
                        format!("{} lies outside its Space's bounds", loc.m_location_id),
                    );
                }
            }
            if (0..3).any(|i| space.bounds.min[i] > space.bounds.max[i]) {
                problem(format!("/Spaces/{s}/Bounds"), "Min is above Max".into());
            }
        }
        for (i, item) in f.items.iter().enumerate() {
            unique(&item.item_id, format!("/Items/{i}/ItemID"), &mut problem);
        }
        for (i, p) in f.processes.iter().enumerate() {
            unique(
                &p.process_id,
                format!("/Processes/{i}/ProcessID"),
                &mut problem,
            );
        }
    }

    /// The classes (superclasses, no cycle), Items and Processes name (their class,
    /// position and the classes a Process accepts) exist.
    fn check_class_and_place_references(&self, problems: &mut Vec<Problem>) {
        let f = &self.file;
        let mut problem = |at: String, message: String| problems.push(Problem::new(at, message));
        let class = |id: &str| self.classes.contains_key(id);
        for (i, c) in f.classes.iter().enumerate() {
            for (j, sup) in c.superclasses.iter().enumerate() {
                if !class(sup) {
                    problem(
                        format!("/Classes/{i}/Superclasses/{j}"),
                        format!("{sup} is not a class of this domain"),
                    );
                }
            }
            if self.reaches_itself(&c.class_id) {
                problem(
                    format!("/Classes/{i}/Superclasses"),
                    format!("{} is its own superclass through a cycle", c.class_id),
                );
            }
        }
        for (i, item) in f.items.iter().enumerate() {
            if !class(&item.class) {
                problem(
                    format!("/Items/{i}/Class"),
                    format!("{} is not a class of this domain", item.class),
                );
            }
            if let Some(pos) = &item.position
                && !self.m_locations.contains_key(pos)
            {
                problem(
                    format!("/Items/{i}/Position"),
                    format!("{pos} is not an M-Location of this domain"),
                );
            }
        }
        for (i, p) in f.processes.iter().enumerate() {
            if !class(&p.class) {
                problem(
                    format!("/Processes/{i}/Class"),
                    format!("{} is not a class of this domain", p.class),
                );
            }
            if let Some(pos) = &p.position
                && !self.m_locations.contains_key(pos)
            {
                problem(
                    format!("/Processes/{i}/Position"),
                    format!("{pos} is not an M-Location of this domain"),
                );
            }
            for (j, c) in p.accepts.iter().flat_map(|a| a.classes.iter()).enumerate() {
                if !class(c) {
                    problem(
                        format!("/Processes/{i}/Accepts/Classes/{j}"),
                        format!("{c} is not a class of this domain"),
                    );
                }
            }
        }
    }

    /// The requester is one of the Processes and reaches Spaces of the domain; no
    /// knowledge source's name is used twice.
    fn check_requester_and_sources(&self, problems: &mut Vec<Problem>) {
        let f = &self.file;
        let mut problem = |at: String, message: String| problems.push(Problem::new(at, message));
        if !self.processes.contains_key(&f.requester.process_id) {
            problem(
                "/Requester/ProcessID".into(),
                format!("{} is not one of the Processes", f.requester.process_id),
            );
        }
        for (i, s) in f.requester.reach.iter().enumerate() {
            if !self.spaces.contains_key(s) {
                problem(
                    format!("/Requester/Reach/{i}"),
                    format!("{s} is not a Space of this domain"),
                );
            }
        }
        let mut names = HashSet::new();
        for (i, s) in f.sources.iter().enumerate() {
            if !names.insert(&s.name) {
                problem(
                    format!("/Sources/{i}/Name"),
                    format!("the source name {} is used twice", s.name),
                );
            }
        }
    }

    /// Each affordance names a class of the domain and Actions of the grammar.
    fn check_affordances(&self, problems: &mut Vec<Problem>) {
        let f = &self.file;
        let mut problem = |at: String, message: String| problems.push(Problem::new(at, message));
        let class = |id: &str| self.classes.contains_key(id);
        let known_action = |a: &str| ACTIONS.contains(&a);
        for (i, a) in f.affordances.iter().enumerate() {
            if !class(&a.class) {
                problem(
                    format!("/Affordances/{i}/Class"),
                    format!("{} is not a class of this domain", a.class),
                );
            }
            for (j, action) in a.actions.iter().enumerate() {
                if !known_action(action) {
                    problem(
                        format!("/Affordances/{i}/Actions/{j}"),
                        unknown_action(action),
                    );
                }
            }
        }
    }

    /// What each constraint and expectation is about (its Scope) exists.
    fn check_scopes(&self, problems: &mut Vec<Problem>) {
        let f = &self.file;
        let mut problem = |at: String, message: String| problems.push(Problem::new(at, message));
        let class = |id: &str| self.classes.contains_key(id);
        for (list, name) in [
            (&f.constraints, "Constraints"),
            (&f.expectations, "Expectations"),
        ] {
            for (i, c) in list.iter().enumerate() {
                let at = format!("/{name}/{i}/Scope");
                let missing = match &c.scope {
                    Scope::Entity(id) if !self.is_entity(id) => {
                        Some(format!("{id} is not an Item or Process of this domain"))
                    }
                    Scope::Class(id) if !class(id) => {
                        Some(format!("{id} is not a class of this domain"))
                    }
                    Scope::Space(id) if !self.spaces.contains_key(id) => {
                        Some(format!("{id} is not a Space of this domain"))
                    }
                    Scope::MLocation(id) if !self.m_locations.contains_key(id) => {
                        Some(format!("{id} is not an M-Location of this domain"))
                    }
                    _ => None,
                };
                if let Some(message) = missing {
                    problem(at, message);
                }
            }
        }
    }

    /// Each Right names a known Action and an existing Item or class; each Action is
    /// described once, and is one of the grammar's.
    fn check_rights_and_actions(&self, problems: &mut Vec<Problem>) {
        let f = &self.file;
        let mut problem = |at: String, message: String| problems.push(Problem::new(at, message));
        let class = |id: &str| self.classes.contains_key(id);
        let known_action = |a: &str| ACTIONS.contains(&a);
        for (i, r) in f.rights.iter().enumerate() {
            if !known_action(&r.action) {
                problem(format!("/Rights/{i}/Action"), unknown_action(&r.action));
            }
            if let Some(item) = &r.item
                && !self.is_entity(item)
            {
                problem(
                    format!("/Rights/{i}/Item"),
                    format!("{item} is not an Item or Process of this domain"),
                );
            }
            if let Some(c) = &r.class
                && !class(c)
            {
                problem(
                    format!("/Rights/{i}/Class"),
                    format!("{c} is not a class of this domain"),
                );
            }
        }
        let mut actions = HashSet::new();
        for (i, a) in f.actions.iter().enumerate() {
            if !known_action(&a.action) {
                problem(format!("/Actions/{i}/Action"), unknown_action(&a.action));
            }
            if !actions.insert(&a.action) {
                problem(
                    format!("/Actions/{i}/Action"),
                    format!("{} is described twice", a.action),
                );
            }
        }
    }

    /// The initial state respects the capacities it declares.
    fn check_capacities(&self, problems: &mut Vec<Problem>) {
        let f = &self.file;
        let mut problem = |at: String, message: String| problems.push(Problem::new(at, message));
        let mut occupancy: HashMap<&str, usize> = HashMap::new();
        for item in &f.items {
            if let Some(pos) = &item.position {
                *occupancy.entry(pos).or_default() += 1;
            }
        }
        for (s, space) in f.spaces.iter().enumerate() {
            for (l, loc) in space.m_locations.iter().enumerate() {
                let n = occupancy
                    .get(loc.m_location_id.as_str())
                    .copied()
                    .unwrap_or(0);
                if let Some(cap) = loc.capacity
                    && n > cap
                {
                    problem(
                        format!("/Spaces/{s}/MLocations/{l}/Capacity"),
                        format!(
                            "{} holds {n} Items but its Capacity is {cap}",
                            loc.m_location_id
                        ),
                    );
                }
            }
        }
    }

    /// Whether following superclasses from `class` leads back to it.
    fn reaches_itself(&self, class: &str) -> bool {
        let mut seen = HashSet::new();
        let mut stack: Vec<&str> = self
            .class(class)
            .map(|c| c.superclasses.iter().map(String::as_str).collect())
            .unwrap_or_default();
        while let Some(c) = stack.pop() {
            if c == class {
                return true;
            }
            if seen.insert(c)
                && let Some(def) = self.class(c)
            {
                stack.extend(def.superclasses.iter().map(String::as_str));
            }
        }
        false
    }

    /// The class and all its superclasses, nearest first.
    pub fn ancestors(&self, class: &str) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        let mut queue = std::collections::VecDeque::from([class]);
        while let Some(c) = queue.pop_front() {
            if out.contains(&c) {
                continue;
            }
            if let Some(def) = self.class(c) {
                out.push(&def.class_id);
                queue.extend(def.superclasses.iter().map(String::as_str));
            }
        }
        out
    }

    /// Whether `class` is `ancestor` or one of its subclasses.
    pub fn is_a(&self, class: &str, ancestor: &str) -> bool {
        self.ancestors(class).contains(&ancestor)
    }

    pub fn class(&self, id: &str) -> Option<&Class> {
        self.classes.get(id).map(|&i| &self.file.classes[i])
    }

    pub fn item(&self, id: &str) -> Option<&Item> {
        self.items.get(id).map(|&i| &self.file.items[i])
    }

    pub fn process(&self, id: &str) -> Option<&Process> {
        self.processes.get(id).map(|&i| &self.file.processes[i])
    }

    pub fn space(&self, id: &str) -> Option<&Space> {
        self.spaces.get(id).map(|&i| &self.file.spaces[i])
    }

    pub fn m_location(&self, id: &str) -> Option<(&Space, &MLocation)> {
        self.m_locations.get(id).map(|&(s, l)| {
            let space = &self.file.spaces[s];
            (space, &space.m_locations[l])
        })
    }

    pub fn action(&self, name: &str) -> Option<&ActionRule> {
        self.actions.get(name).map(|&i| &self.file.actions[i])
    }

    pub fn is_entity(&self, id: &str) -> bool {
        self.items.contains_key(id) || self.processes.contains_key(id)
    }

    /// The class of an Item or Process.
    pub fn class_of(&self, entity: &str) -> Option<&str> {
        self.item(entity)
            .map(|i| i.class.as_str())
            .or_else(|| self.process(entity).map(|p| p.class.as_str()))
    }

    /// The source with a role, if the domain has one.
    pub fn source(&self, role: Role) -> Option<&Source> {
        self.file.sources.iter().find(|s| s.role == role)
    }

    /// The facts of the domain: its Relations, and where each Item is, who owns it and what
    /// it is, derived from the Items.
    pub fn facts(&self) -> Vec<Fact> {
        let mut facts = self.file.relations.clone();
        for item in &self.file.items {
            let fact = |predicate: &str, object: &str| Fact {
                subject: item.item_id.clone(),
                predicate: predicate.into(),
                object: object.into(),
            };
            if let Some(pos) = &item.position {
                facts.push(fact("locatedAt", pos));
            }
            if let Some(owner) = &item.owner {
                facts.push(fact("ownedBy", owner));
            }
            facts.push(fact("isA", &item.class));
        }
        facts
    }

    /// Every ID a client may name in a Request: Items, Processes, Spaces, M-Locations.
    pub fn all_ids(&self) -> impl Iterator<Item = &str> {
        let f = &self.file;
        f.items
            .iter()
            .map(|i| i.item_id.as_str())
            .chain(f.processes.iter().map(|p| p.process_id.as_str()))
            .chain(f.spaces.iter().map(|s| s.space_id.as_str()))
            .chain(self.m_locations.keys().map(String::as_str))
    }
}

fn unknown_action(action: &str) -> String {
    let hint = crate::protocol::process_action::closest_action(action)
        .map(|a| format!(" (did you mean {a}?)"))
        .unwrap_or_default();
    format!("{action} is not an MMM-TEC V2.2 Action{hint}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn the_built_in_domain_passes_every_check() {
        let checked = Domain::parse(DEFAULT_DOMAIN, "the built-in domain").unwrap();
        let unchecked = Domain::default_domain();
        // The same file read (the indexes are made from it alike).
        assert_eq!(
            serde_json::to_value(&checked.file).unwrap(),
            serde_json::to_value(&unchecked.file).unwrap()
        );
    }

    #[test]
    fn the_default_domain_loads() {
        let d = Domain::default_domain();
        assert_eq!(d.file.m_instance, "MI:PublicSquare");
        assert_eq!(
            d.ancestors("Kiosk"),
            ["Kiosk", "Furniture", "Item", "Entity"]
        );
        assert!(d.is_a("Fountain", "Landmark"));
        assert!(d.m_location("MLoc:Square.Stage").is_some());
    }

    #[test]
    fn every_mistake_is_reported_with_its_path() {
        let mut v: Value = serde_json::from_str(DEFAULT_DOMAIN).unwrap();
        v["Items"][0]["Class"] = "Avtar".into();
        v["Items"][1]["Position"] = "MLoc:Nowhere".into();
        v["Classes"][3]["Superclasses"] = serde_json::json!(["Ghost"]);
        v["Rights"][0]["Action"] = "MM-Mve".into();
        let e = Domain::parse(&v.to_string(), "test.json").unwrap_err();
        let at: Vec<&str> = e.problems.iter().map(|p| p.at.as_str()).collect();
        assert!(at.contains(&"/Items/0/Class"), "{e}");
        assert!(at.contains(&"/Items/1/Position"), "{e}");
        assert!(at.contains(&"/Classes/3/Superclasses/0"), "{e}");
        assert!(at.contains(&"/Rights/0/Action"), "{e}");
        assert!(e.to_string().contains("did you mean MM-Move?"), "{e}");
    }

    #[test]
    fn schema_and_syntax_errors_have_places() {
        assert!(
            Domain::parse("[", "x.json")
                .unwrap_err()
                .to_string()
                .contains("in the domain file")
        );
        let e = Domain::parse("{\"MInstance\": 3,", "x.json").unwrap_err();
        assert!(e.problems[0].at.starts_with("line 1"), "{e}");
        let e = Domain::parse("{\"MInstance\": 3}", "x.json").unwrap_err();
        assert!(e.problems.iter().any(|p| p.at == "/MInstance"), "{e}");
        assert!(
            e.problems
                .iter()
                .any(|p| p.at == "/" && p.message.contains("Requester")),
            "{e}"
        );
    }

    #[test]
    fn capacities_and_cycles_are_checked() {
        let mut v: Value = serde_json::from_str(DEFAULT_DOMAIN).unwrap();
        v["Items"][1]["Position"] = "MLoc:Square.Fountain".into();
        v["Classes"][0]["Superclasses"] = serde_json::json!(["Avatar"]);
        let e = Domain::parse(&v.to_string(), "x.json").unwrap_err();
        assert!(e.to_string().contains("Capacity is 1"), "{e}");
        assert!(e.to_string().contains("cycle"), "{e}");
    }
}
