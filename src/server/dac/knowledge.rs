//! Answers of the knowledge Kinds (everything but commitment and feasibility) from the domain:
//! grounding of terms, clarification of ambiguous terms and IDs, affordances, constraints and
//! behavioural expectations, inherited through the class hierarchy.

use crate::protocol::dac::{Affordance, Answer, DacRequest, ObjectClass, Relation};
use crate::protocol::message::Fraction;
use crate::protocol::spelling::edit_distance;
use crate::server::dac::domain::{Domain, Role, Scope, ScopedText, Verb};
use crate::server::dac::sources::Consulted;

/// What one Kind found: the Answer, the parts of the question it could not answer, and
/// remarks for the Answer's Text.
#[derive(Default, Debug)]
pub struct Found {
    pub answer: Answer,
    /// Things asked about that the domain does not know (they make the Outcome partial).
    pub missing: Vec<String>,
    pub notes: Vec<String>,
}

impl Found {
    pub fn is_empty(&self) -> bool {
        let a = &self.answer;
        a.object_classes.as_ref().is_none_or(Vec::is_empty)
            && a.relations.as_ref().is_none_or(Vec::is_empty)
            && a.affordances.as_ref().is_none_or(Vec::is_empty)
            && a.constraints.as_ref().is_none_or(Vec::is_empty)
            && a.behavioural_expectations
                .as_ref()
                .is_none_or(Vec::is_empty)
    }
}

/// One way a term may be grounded.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub class: String,
    pub confidence: f64,
    /// The Entity the term names, when it names one.
    pub entity: Option<String>,
}

/// Lower case, single spaces, without a leading article.
fn normalize(text: &str) -> String {
    let words: Vec<String> = text.split_whitespace().map(str::to_lowercase).collect();
    let words = match words.first().map(String::as_str) {
        Some("the" | "a" | "an") if words.len() > 1 => &words[1..],
        _ => &words[..],
    };
    words.join(" ")
}

fn singular(word: &str) -> Option<String> {
    if let Some(stem) = word.strip_suffix("ies") {
        Some(format!("{stem}y"))
    } else if ["ses", "xes", "ches", "shes"]
        .iter()
        .any(|s| word.ends_with(s))
    {
        word.strip_suffix("es").map(str::to_owned)
    } else if word.len() > 3 && !word.ends_with("ss") {
        word.strip_suffix('s').map(str::to_owned)
    } else {
        None
    }
}

/// Every class a term may denote, best first. Confidences: the class name or label 1.0, an
/// Entity's ID 1.0 or label 0.95, a synonym 0.9, a plural 0.85 (0.8 of a synonym), one or two
/// letters off 0.65 or 0.55, a word of a longer term 0.6.
pub fn candidates(domain: &Domain, term: &str) -> Vec<Candidate> {
    let text = normalize(term);
    let mut found: Vec<Candidate> = Vec::new();
    let mut add = |class: &str, confidence: f64, entity: Option<&str>| match found
        .iter_mut()
        .find(|c| c.class == class && c.entity.as_deref() == entity)
    {
        Some(c) if c.confidence >= confidence => {}
        Some(c) => c.confidence = confidence,
        None => found.push(Candidate {
            class: class.to_owned(),
            confidence,
            entity: entity.map(str::to_owned),
        }),
    };
    if text.is_empty() {
        return found;
    }
    if let Some(class) = domain.class_of(term.trim()) {
        add(class, 1.0, Some(term.trim()));
    }
    for item in &domain.file.items {
        if !item.label.is_empty() && normalize(&item.label) == text {
            add(&item.class, 0.95, Some(&item.item_id));
        }
    }
    let singular = singular(&text);
    for class in &domain.file.classes {
        let label = normalize(&class.label);
        let id = class.class_id.to_lowercase();
        if text == label || text == id {
            add(&class.class_id, 1.0, None);
        } else if singular.as_deref().is_some_and(|s| s == label || s == id) {
            add(&class.class_id, 0.85, None);
        } else if text.len() >= 4 {
            let d = edit_distance(&text, &label).min(edit_distance(&text, &id));
            if (1..=2).contains(&d) {
                add(&class.class_id, if d == 1 { 0.65 } else { 0.55 }, None);
            }
        }
        for synonym in &class.synonyms {
            let synonym = normalize(synonym);
            if text == synonym {
                add(&class.class_id, 0.9, None);
            } else if singular.as_deref() == Some(synonym.as_str()) {
                add(&class.class_id, 0.8, None);
            }
        }
        if text.contains(' ') && text.split(' ').any(|w| w == label || w == id) {
            add(&class.class_id, 0.6, None);
        }
    }
    found.sort_by(|a, b| {
        b.confidence
            .total_cmp(&a.confidence)
            .then_with(|| a.class.cmp(&b.class))
    });
    found
}

/// The terms of a Request: its Terms, or else the words of its Question that the domain
/// knows well (confidence 0.8 or more).
fn terms(domain: &Domain, request: &DacRequest) -> Vec<(String, Option<String>)> {
    if let Some(terms) = &request.terms {
        return terms
            .iter()
            .map(|t| (t.text.clone(), t.class.clone()))
            .collect();
    }
    let Some(question) = &request.question else {
        return Vec::new();
    };
    let words: Vec<&str> = question
        .split(|c: char| !(c.is_alphanumeric() || "#:.-_".contains(c)))
        .map(|w| w.trim_end_matches('.'))
        .filter(|w| !w.is_empty())
        .collect();
    let mut out: Vec<(String, Option<String>)> = Vec::new();
    for w in words {
        if candidates(domain, w)
            .first()
            .is_some_and(|c| c.confidence >= 0.8)
            && !out.iter().any(|(t, _)| t.eq_ignore_ascii_case(w))
        {
            out.push((w.to_owned(), None));
        }
    }
    out
}

fn class_entry(domain: &Domain, class: &str, confidence: f64) -> ObjectClass {
    ObjectClass {
        class: class.to_owned(),
        label: domain.class(class).map(|c| c.label.clone()),
        confidence: Some(Fraction::new(confidence)),
    }
}

fn relation(subject: &str, predicate: &str, object: &str) -> Relation {
    Relation {
        subject: subject.to_owned(),
        predicate: predicate.to_owned(),
        object: object.to_owned(),
    }
}

fn push_unique<T: PartialEq>(list: &mut Vec<T>, value: T) {
    if !list.contains(&value) {
        list.push(value);
    }
}

/// The classes and relations an Answer names, each once.
#[derive(Default)]
struct Meanings {
    classes: Vec<ObjectClass>,
    relations: Vec<Relation>,
}

impl Meanings {
    /// `class`, with `confidence`, unless it is named already.
    fn class(&mut self, domain: &Domain, class: &str, confidence: f64) {
        if !self.classes.iter().any(|e| e.class == class) {
            self.classes.push(class_entry(domain, class, confidence));
        }
    }

    fn relate(&mut self, subject: &str, predicate: &str, object: &str) {
        push_unique(&mut self.relations, relation(subject, predicate, object));
    }

    fn into_answer(self, found: &mut Found) {
        found.answer.object_classes = Some(self.classes);
        found.answer.relations = Some(self.relations);
    }
}

/// `semantic_grounding`: each term to the class it denotes, with a confidence.
pub fn grounding(domain: &Domain, sources: &mut Consulted, request: &DacRequest) -> Found {
    let mut found = Found::default();
    let terms = terms(domain, request);
    if terms.is_empty() {
        found
            .missing
            .push("no term to ground: give Terms, or a Question naming things".into());
        return found;
    }
    if !sources.ask(Role::Ontology, || {
        format!(
            "classes for {}",
            terms
                .iter()
                .map(|(t, _)| format!("\"{t}\""))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }) {
        found.missing.extend(
            terms
                .iter()
                .map(|(t, _)| format!("\"{t}\" (ontology unavailable)")),
        );
        return found;
    }
    let mut meanings = Meanings::default();
    for (text, hint) in &terms {
        let all = candidates(domain, text);
        let Some(best) = all.first() else {
            found
                .missing
                .push(format!("\"{text}\" is not a term of this domain"));
            continue;
        };
        let top: Vec<&Candidate> = all
            .iter()
            .filter(|c| (c.confidence - best.confidence).abs() < 1e-9)
            .collect();
        let top = decided_by_hint(domain, text, hint.as_deref(), top, &mut found.notes);
        if top.len() > 1 {
            found.notes.push(format!(
                "\"{text}\" is ambiguous between {}; ask for clarification",
                top.iter()
                    .map(|c| c.class.as_str())
                    .collect::<Vec<_>>()
                    .join(" and ")
            ));
        }
        for c in top {
            meanings.class(domain, &c.class, c.confidence);
            match &c.entity {
                Some(entity) => {
                    meanings.relate(text, "denotes", entity);
                    meanings.relate(entity, "isA", &c.class);
                }
                None => meanings.relate(text, "denotes", &c.class),
            }
            for sup in domain
                .class(&c.class)
                .map(|d| d.superclasses.clone())
                .unwrap_or_default()
            {
                meanings.relate(&c.class, "subClassOf", &sup);
            }
        }
    }
    meanings.into_answer(&mut found);
    found
}

/// The best meanings of `text` narrowed to those of the class the Request assumed for it
/// (`hint`), where any is; a hint that is no class of the domain, or that none of them
/// is, is said in `notes` and the meanings stay as they were.
fn decided_by_hint<'c>(
    domain: &Domain,
    text: &str,
    hint: Option<&str>,
    top: Vec<&'c Candidate>,
    notes: &mut Vec<String>,
) -> Vec<&'c Candidate> {
    let Some(hint) = hint else {
        return top;
    };
    let fitting: Vec<&Candidate> = top
        .iter()
        .copied()
        .filter(|c| domain.is_a(&c.class, hint))
        .collect();
    if !fitting.is_empty() {
        if top.len() > fitting.len() {
            notes.push(format!(
                "\"{text}\" is ambiguous; your class {hint} decided it"
            ));
        }
        return fitting;
    }
    if domain.class(hint).is_none() {
        notes.push(format!(
            "{hint} (assumed for \"{text}\") is not a class of this domain"
        ));
    } else {
        notes.push(format!(
            "\"{text}\" denotes {}, not {hint} as assumed",
            top.iter()
                .map(|c| c.class.as_str())
                .collect::<Vec<_>>()
                .join(" or ")
        ));
    }
    top
}

/// `clarification`: every candidate meaning of each term and of each ambiguous ID.
pub fn clarification(domain: &Domain, sources: &mut Consulted, request: &DacRequest) -> Found {
    let mut found = Found::default();
    let terms = terms(domain, request);
    let ids = request.entity_ids.clone().unwrap_or_default();
    if terms.is_empty() && ids.is_empty() {
        found
            .missing
            .push("nothing to clarify: give Terms or EntityIDs".into());
        return found;
    }
    let mut meanings = Meanings::default();
    if !terms.is_empty() && sources.ask(Role::Ontology, || "candidate classes of the terms".into())
    {
        for (text, _) in &terms {
            clarify_term(domain, text, &mut found, &mut meanings);
        }
    } else if !terms.is_empty() {
        found
            .missing
            .push("the candidate classes of the terms (ontology unavailable)".into());
    }
    if !ids.is_empty()
        && sources.ask(Role::Scene, || {
            format!("Entities matching {}", ids.join(", "))
        })
    {
        for id in &ids {
            clarify_id(domain, id, &mut found, &mut meanings);
        }
    } else if !ids.is_empty() {
        found
            .missing
            .push("the Entities the IDs may denote (scene unavailable)".into());
    }
    meanings.into_answer(&mut found);
    found
}

/// The meanings of a term, each of confidence 0.5 or more, and whether it is ambiguous.
fn clarify_term(domain: &Domain, text: &str, found: &mut Found, meanings: &mut Meanings) {
    let all: Vec<Candidate> = candidates(domain, text)
        .into_iter()
        .filter(|c| c.confidence >= 0.5)
        .collect();
    match all.len() {
        0 => found
            .missing
            .push(format!("\"{text}\" has no meaning in this domain")),
        1 => found
            .notes
            .push(format!("\"{text}\" is unambiguous: {}", all[0].class)),
        _ => found.notes.push(format!(
            "\"{text}\" may mean {}",
            all.iter()
                .map(|c| format!("{} ({})", c.class, c.confidence))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
    for c in &all {
        meanings.class(domain, &c.class, c.confidence);
        meanings.relate(text, "mayDenote", c.entity.as_deref().unwrap_or(&c.class));
    }
}

/// The Entities an ID (or part of one) may denote, and whether it is ambiguous.
fn clarify_id(domain: &Domain, id: &str, found: &mut Found, meanings: &mut Meanings) {
    let matches = entity_matches(domain, id);
    match matches.as_slice() {
        [] => found
            .missing
            .push(format!("\"{id}\" names no Entity of this domain")),
        [only] if only == id => found.notes.push(format!("{id} is unambiguous")),
        _ => found.notes.push(format!(
            "\"{id}\" may denote {}",
            matches
                .iter()
                .map(|m| describe_entity(domain, m))
                .collect::<Vec<_>>()
                .join(" or ")
        )),
    }
    for m in matches {
        if let Some(class) = domain.class_of(&m) {
            meanings.class(domain, class, 1.0);
        }
        meanings.relate(id, "mayDenote", &m);
    }
}

/// The Entities an ID (or part of one) may denote: itself if it is one; else those whose ID
/// starts with it, whose class it names, or whose label contains it.
fn entity_matches(domain: &Domain, id: &str) -> Vec<String> {
    if domain.is_entity(id) {
        return vec![id.to_owned()];
    }
    let lower = id.to_lowercase();
    let classes: Vec<String> = candidates(domain, id)
        .into_iter()
        .filter(|c| c.confidence >= 0.8)
        .map(|c| c.class)
        .collect();
    let items = domain
        .file
        .items
        .iter()
        .map(|i| (&i.item_id, &i.class, &i.label));
    let processes = domain
        .file
        .processes
        .iter()
        .map(|p| (&p.process_id, &p.class, &p.label));
    items
        .chain(processes)
        .filter(|(eid, class, label)| {
            eid.to_lowercase().starts_with(&lower)
                || classes.iter().any(|c| domain.is_a(class, c))
                || (lower.len() >= 4 && label.to_lowercase().contains(&lower))
        })
        .map(|(eid, _, _)| eid.clone())
        .collect()
}

fn describe_entity(domain: &Domain, id: &str) -> String {
    let label = domain
        .item(id)
        .map(|i| i.label.as_str())
        .or_else(|| domain.process(id).map(|p| p.label.as_str()))
        .unwrap_or_default();
    if label.is_empty() {
        id.to_owned()
    } else {
        format!("{id} ({label})")
    }
}

/// What a Request is about: Entities, and the M-Locations (with their Spaces) concerned.
#[derive(Default)]
struct Subjects {
    entities: Vec<String>,
    spaces: Vec<String>,
    m_locations: Vec<String>,
}

/// Resolves EntityIDs and Space against the scene; unknown ones go to `missing`.
fn subjects(domain: &Domain, request: &DacRequest, found: &mut Found) -> Subjects {
    let mut s = Subjects::default();
    for id in request.entity_ids.iter().flatten() {
        if domain.is_entity(id) {
            push_unique(&mut s.entities, id.clone());
            if let Some(pos) = domain.item(id).and_then(|i| i.position.as_ref())
                && let Some((space, _)) = domain.m_location(pos)
            {
                push_unique(&mut s.m_locations, pos.clone());
                push_unique(&mut s.spaces, space.space_id.clone());
            }
        } else {
            let hint = crate::protocol::spelling::closest(id, domain.all_ids())
                .map(|c| format!(" (did you mean {c}?)"))
                .unwrap_or_default();
            found.missing.push(format!(
                "{id} is not an Entity of {}{hint}",
                domain.file.m_instance
            ));
        }
    }
    if let Some(space) = &request.space {
        let wanted = space.m_location.clone().unwrap_or_default();
        for loc in &wanted {
            if domain.m_location(loc).is_none() {
                found.missing.push(format!(
                    "{loc} is not an M-Location of {}",
                    domain.file.m_instance
                ));
            }
        }
        if let Some(space_id) = &space.space_id {
            match domain.space(space_id) {
                None => found.missing.push(format!(
                    "{space_id} is not a Space of {}",
                    domain.file.m_instance
                )),
                Some(sp) => {
                    push_unique(&mut s.spaces, sp.space_id.clone());
                    for loc in &sp.m_locations {
                        if wanted.is_empty() || wanted.contains(&loc.m_location_id) {
                            push_unique(&mut s.m_locations, loc.m_location_id.clone());
                        }
                    }
                }
            }
        } else {
            for loc in wanted.iter().filter(|l| domain.m_location(l).is_some()) {
                push_unique(&mut s.m_locations, loc.clone());
            }
        }
        // The Entities in the Space (or its named M-Locations), when no EntityIDs were given.
        if request.entity_ids.as_ref().is_none_or(Vec::is_empty) {
            for item in &domain.file.items {
                if item
                    .position
                    .as_ref()
                    .is_some_and(|p| s.m_locations.contains(p))
                {
                    push_unique(&mut s.entities, item.item_id.clone());
                }
            }
        }
    }
    s
}

/// Whether a scoped text applies to the subjects (classes inherited).
fn applies(domain: &Domain, scope: &Scope, s: &Subjects, inherit: bool) -> bool {
    match scope {
        Scope::Entity(id) => s.entities.contains(id),
        Scope::Class(class) => s.entities.iter().any(|e| {
            domain.class_of(e).is_some_and(|c| {
                if inherit {
                    domain.is_a(c, class)
                } else {
                    c == class
                }
            })
        }),
        Scope::Space(id) => s.spaces.contains(id),
        Scope::MLocation(id) => s.m_locations.contains(id),
    }
}

fn ask_subjects(
    domain: &Domain,
    sources: &mut Consulted,
    request: &DacRequest,
    found: &mut Found,
) -> Option<Subjects> {
    let asked =
        request.entity_ids.as_ref().is_some_and(|v| !v.is_empty()) || request.space.is_some();
    if !asked {
        found
            .missing
            .push("name EntityIDs or a Space to ask about".into());
        return None;
    }
    if !sources.ask(Role::Scene, || {
        "the Entities and Space of the Request".into()
    }) {
        found
            .missing
            .push("the Entities and Space asked about (scene unavailable)".into());
        return None;
    }
    Some(subjects(domain, request, found))
}

/// `affordances`: the Actions each Entity affords, inherited through its classes; for Terms,
/// the Actions of the classes they denote.
pub fn affordances(domain: &Domain, sources: &mut Consulted, request: &DacRequest) -> Found {
    let mut found = Found::default();
    let mut out: Vec<Affordance> = Vec::new();
    let by_terms =
        request.entity_ids.is_none() && request.space.is_none() && request.terms.is_some();
    let subjects = if by_terms {
        None
    } else {
        ask_subjects(domain, sources, request, &mut found)
    };
    let inherit = sources.ask(Role::Ontology, || "the class hierarchy".into());
    if !inherit {
        found
            .notes
            .push("only directly declared affordances: the class hierarchy is unavailable".into());
    }
    let of_class = |class: &str| -> Vec<(String, String)> {
        let classes: Vec<&str> = if inherit {
            domain.ancestors(class)
        } else {
            vec![class]
        };
        let mut actions: Vec<(String, String)> = Vec::new();
        for c in classes {
            for a in domain.file.affordances.iter().filter(|a| a.class == c) {
                for action in &a.actions {
                    if !actions.iter().any(|(x, _)| x == action) {
                        actions.push((action.clone(), c.to_owned()));
                    }
                }
            }
        }
        actions
    };
    if let Some(subjects) = subjects {
        for entity in &subjects.entities {
            let Some(class) = domain.class_of(entity) else {
                continue;
            };
            for (action, declared_by) in of_class(class) {
                out.push(Affordance {
                    entity_id: Some(entity.clone()),
                    class: Some(declared_by),
                    action,
                });
            }
        }
        if subjects.entities.is_empty() && found.missing.is_empty() {
            found
                .notes
                .push("no Entity is placed in the Space asked about".into());
        }
    }
    if by_terms {
        for (text, _) in terms(domain, request) {
            match candidates(domain, &text).first() {
                Some(c) => {
                    for (action, declared_by) in of_class(&c.class) {
                        out.push(Affordance {
                            entity_id: c.entity.clone(),
                            class: Some(declared_by),
                            action,
                        });
                    }
                }
                None => found
                    .missing
                    .push(format!("\"{text}\" is not a term of this domain")),
            }
        }
    }
    found.answer.affordances = Some(out);
    found
}

/// `constraints`: the constraints on the Entities and Space asked about: the domain's norms,
/// the M-Locations' capacities and formats, the requester's May Nots, and the commitments the
/// dialogue retains about them.
pub fn constraints(
    domain: &Domain,
    sources: &mut Consulted,
    request: &DacRequest,
    retained: &[(String, String)],
) -> Found {
    let mut found = Found::default();
    let Some(subjects) = ask_subjects(domain, sources, request, &mut found) else {
        return found;
    };
    let mut out: Vec<String> = Vec::new();
    let inherit = sources.available(Role::Ontology);
    if sources.ask(Role::Norms, || "the norms of the Entities and Space".into()) {
        out.extend(scoped(domain, &domain.file.constraints, &subjects, inherit));
    } else {
        found.notes.push(
            "norms unavailable: only constraints from the scene, Rights and commitments".into(),
        );
    }
    for loc_id in &subjects.m_locations {
        if let Some((_, loc)) = domain.m_location(loc_id) {
            let here = domain
                .file
                .items
                .iter()
                .filter(|i| i.position.as_deref() == Some(loc_id))
                .count();
            if let Some(cap) = loc.capacity {
                out.push(format!(
                    "{loc_id} holds at most {cap} Item{} (now {here})",
                    if cap == 1 { "" } else { "s" }
                ));
            }
            if let Some(formats) = &loc.formats {
                out.push(format!(
                    "{loc_id} takes only {} Items",
                    formats.join(" or ")
                ));
            }
        }
    }
    if sources.ask(Role::Rights, || {
        "the requester's Rights on the Entities".into()
    }) {
        let requester = &domain.file.requester.process_id;
        for right in domain.file.rights.iter().filter(|r| r.verb == Verb::MayNot) {
            let concerns = match (&right.item, &right.class) {
                (Some(item), _) => subjects.entities.contains(item),
                (None, Some(class)) => subjects
                    .entities
                    .iter()
                    .any(|e| domain.class_of(e).is_some_and(|c| domain.is_a(c, class))),
                _ => false,
            };
            if concerns {
                let on = right
                    .item
                    .clone()
                    .or_else(|| right.class.clone().map(|c| format!("any {c}")))
                    .unwrap_or_default();
                out.push(format!("{requester} may not {} {on}", right.action));
            }
        }
    }
    let mentioned = |statement: &str| {
        statement.split_whitespace().any(|w| {
            subjects.entities.iter().any(|e| e == w)
                || subjects.m_locations.iter().any(|l| l == w)
                || subjects.spaces.iter().any(|s| s == w)
        })
    };
    for (id, statement) in retained {
        if mentioned(statement) {
            out.push(format!("committed ({id}): {statement}"));
        }
    }
    dedup(&mut out);
    found.answer.constraints = Some(out);
    found
}

/// `behavioural_expectations`: what the Entities and Space asked about are expected to do.
pub fn expectations(domain: &Domain, sources: &mut Consulted, request: &DacRequest) -> Found {
    let mut found = Found::default();
    let Some(subjects) = ask_subjects(domain, sources, request, &mut found) else {
        return found;
    };
    let inherit = sources.ask(Role::Ontology, || "the class hierarchy".into());
    if sources.ask(Role::Norms, || {
        "the behavioural expectations of the Entities and Space".into()
    }) {
        let mut out = scoped(domain, &domain.file.expectations, &subjects, inherit);
        dedup(&mut out);
        found.answer.behavioural_expectations = Some(out);
    } else {
        found
            .missing
            .push("the behavioural expectations (norms unavailable)".into());
    }
    found
}

fn scoped(
    domain: &Domain,
    texts: &[ScopedText],
    subjects: &Subjects,
    inherit: bool,
) -> Vec<String> {
    texts
        .iter()
        .filter(|t| applies(domain, &t.scope, subjects, inherit))
        .map(|t| t.text.clone())
        .collect()
}

fn dedup(list: &mut Vec<String>) {
    let mut seen = std::collections::HashSet::new();
    list.retain(|s| seen.insert(s.clone()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grounding_confidences() {
        let d = Domain::default_domain();
        let best = |t: &str| {
            candidates(&d, t)
                .first()
                .map(|c| (c.class.clone(), c.confidence))
        };
        assert_eq!(best("fountain"), Some(("Fountain".into(), 1.0)));
        assert_eq!(best("The Fountain"), Some(("Fountain".into(), 1.0)));
        assert_eq!(best("benches"), Some(("Bench".into(), 0.85)));
        assert_eq!(best("seat"), Some(("Bench".into(), 0.9)));
        assert_eq!(best("fountian"), Some(("Fountain".into(), 0.55)));
        assert_eq!(best("Avatar#7"), Some(("Avatar".into(), 1.0)));
        assert_eq!(best("spaceship"), None);
        let stand: Vec<String> = candidates(&d, "stand")
            .into_iter()
            .map(|c| c.class)
            .collect();
        assert_eq!(stand, ["Kiosk", "Stage"]);
    }

    #[test]
    fn entity_matches_by_prefix_class_and_label() {
        let d = Domain::default_domain();
        assert_eq!(entity_matches(&d, "Avatar"), ["Avatar#7", "Avatar#9"]);
        assert_eq!(entity_matches(&d, "kiosk"), ["Kiosk#3", "Kiosk#4"]);
        assert_eq!(entity_matches(&d, "Fountain#1"), ["Fountain#1"]);
        assert!(entity_matches(&d, "zeppelin").is_empty());
    }
}
