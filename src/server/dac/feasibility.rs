//! Feasibility of Process Actions (MCP-BINDING section 5): each step is parsed with the shared
//! grammar and judged against a copy of the domain's state as the earlier steps left it.
//!
//! The checks run in this order and the first that fails gives the step's PA Status:
//! FaultyReq (grammar, unknown Action, missing complement), IncID (unknown or hidden ID),
//! IncDQ (a Qualifier that does not match the Item's), LocOOR (a location outside the Space
//! asked about or the requester's reach, or a point outside its M-Location), InsRights (no May,
//! or a May Not), QualNS (a format the target does not take, or cannot be converted to),
//! PostRef (the receiving service refuses), InsValue (the price exceeds what is left in the
//! wallet), Clash (the state or a retained commitment stands in the way), else Ack, whose
//! effect the later steps see.

use crate::protocol::dac::{Feasibility, Overall, PaStatus, ProcessActionStep, StepResult};
use crate::protocol::process_action::{self, Preposition, Statement, Target};
use crate::protocol::triple::Triple;
use crate::server::dac::domain::{ActionRule, Domain, Effect, Item, Role, Verb};
use crate::server::dac::sources::Consulted;
use std::collections::{HashMap, HashSet};

/// The part of the domain a plan can change.
#[derive(Clone, Debug)]
struct World {
    positions: HashMap<String, Option<String>>,
    owners: HashMap<String, Option<String>>,
    formats: HashMap<String, Option<String>>,
    /// Hidden Items, with the step that hid them.
    hidden: HashMap<String, u64>,
    /// Posted Items, with the Process they went to.
    posted: HashMap<String, String>,
    wallet: f64,
    /// Which step last changed an Item, for the Reasons.
    changed_by: HashMap<String, u64>,
}

impl World {
    fn new(domain: &Domain) -> World {
        let items = &domain.file.items;
        World {
            positions: items
                .iter()
                .map(|i| (i.item_id.clone(), i.position.clone()))
                .collect(),
            owners: items
                .iter()
                .map(|i| (i.item_id.clone(), i.owner.clone()))
                .collect(),
            formats: items
                .iter()
                .map(|i| (i.item_id.clone(), i.format().map(str::to_owned)))
                .collect(),
            hidden: HashMap::new(),
            posted: HashMap::new(),
            wallet: domain.file.requester.wallet.amount,
            changed_by: HashMap::new(),
        }
    }

    fn position(&self, item: &str) -> Option<&str> {
        self.positions.get(item).and_then(|p| p.as_deref())
    }

    fn occupants(&self, location: &str) -> Vec<&str> {
        let mut here: Vec<&str> = self
            .positions
            .iter()
            .filter(|(_, p)| p.as_deref() == Some(location))
            .map(|(i, _)| i.as_str())
            .collect();
        here.sort_unstable();
        here
    }

    /// Whether a commitment about the state holds; `None` for predicates the state does not
    /// decide.
    fn holds(&self, t: &Triple) -> Option<bool> {
        // Only Items the state knows: an unplaced Item is located nowhere (so `not
        // locatedAt X` holds for it), an Item without owner is owned by no one.
        let fact = match t.predicate.as_str() {
            "locatedAt" => self.positions.get(&t.subject)?.as_deref() == Some(t.object.as_str()),
            "ownedBy" => self.owners.get(&t.subject)?.as_deref() == Some(t.object.as_str()),
            _ => return None,
        };
        Some(fact != t.negated)
    }

    fn by_step(&self, item: &str) -> String {
        self.changed_by
            .get(item)
            .map(|s| format!(" (since step {s})"))
            .unwrap_or_default()
    }
}

/// The outcome of one step.
struct Verdict {
    status: PaStatus,
    reason: String,
}

fn verdict(status: PaStatus, reason: impl Into<String>) -> Verdict {
    Verdict {
        status,
        reason: reason.into(),
    }
}

/// What the knowledge sources allow the judge to check. A step that needs a source that
/// failed is never Ack (MCP-BINDING section 2): it gets the PA Status of the check that could
/// not be made, and a Reason that names the source.
struct Checks {
    rights: Result<(), String>,
    wallet: Result<(), String>,
    services: Result<(), String>,
}

impl Checks {
    /// Asks the knowledge sources each check needs (the rights, the wallet and prices, and
    /// the receiving services where a step Posts); a source that fails makes its check an
    /// `Err` that names it.
    fn consulted(domain: &Domain, sources: &mut Consulted, steps: &[ProcessActionStep]) -> Checks {
        let requester = domain.file.requester.process_id.clone();
        let mut consult = |role: Role, what: String, cannot: &str| -> Result<(), String> {
            if sources.ask(role, || what) {
                Ok(())
            } else {
                Err(format!(
                    "{cannot}: the source {} failed, so this step could not be checked",
                    sources.name(role)
                ))
            }
        };
        Checks {
            rights: consult(
                Role::Rights,
                format!("the Rights of {requester}"),
                "the Rights could not be checked",
            ),
            wallet: consult(
                Role::Wallet,
                format!("the wallet of {requester} and the prices"),
                "the price could not be checked against the wallet",
            ),
            services: if steps
                .iter()
                .any(|s| s.statement.trim_start().to_lowercase().starts_with("post"))
            {
                consult(
                    Role::Services,
                    "whether the receiving services take the Posts".into(),
                    "the receiving service could not be asked",
                )
            } else {
                Ok(())
            },
        }
    }

    /// What could not be checked, for the Answer's Text.
    fn skipped(&self, sources: &Consulted) -> Vec<String> {
        let mut notes = Vec::new();
        for (check, role, what) in [
            (&self.rights, Role::Rights, "the Rights"),
            (&self.wallet, Role::Wallet, "the prices"),
            (&self.services, Role::Services, "the receiving services"),
        ] {
            if check.is_err() {
                notes.push(format!(
                    "{what} could not be checked ({} failed): the steps that need them are not Ack",
                    sources.name(role)
                ));
            }
        }
        notes
    }
}

/// The result of a feasibility Request.
pub struct Judged {
    pub feasibility: Feasibility,
    /// Remarks for the Answer's Text (skipped checks).
    pub notes: Vec<String>,
}

/// Judges the steps of a plan. `space` is the Request's Space, `retained` the commitments the
/// dialogue retains. `None` when the scene (where everything is) cannot be consulted.
pub fn judge(
    domain: &Domain,
    sources: &mut Consulted,
    steps: &[ProcessActionStep],
    space: Option<&str>,
    retained: &[(String, Triple)],
) -> Option<Judged> {
    if !sources.ask(Role::Scene, || {
        "the state of the Items the plan touches".into()
    }) {
        return None;
    }
    let checks = Checks::consulted(domain, sources, steps);
    let notes = checks.skipped(sources);
    let mut order: Vec<&ProcessActionStep> = steps.iter().collect();
    order.sort_by_key(|s| s.step.get());
    let mut world = World::new(domain);
    let mut seen_steps = HashSet::new();
    let mut results = Vec::with_capacity(steps.len());
    for step in order {
        let v = if !seen_steps.insert(step.step.get()) {
            verdict(
                PaStatus::FaultyReq,
                format!("Step {} appears twice in the plan", step.step.get()),
            )
        } else {
            judge_step(domain, &checks, &mut world, step, space, retained)
        };
        results.push(StepResult {
            step: step.step.clone(),
            pa_status: v.status,
            reason: Some(v.reason),
        });
    }
    let overall = Overall::of(results.iter().map(|r| r.pa_status));
    Some(Judged {
        feasibility: Feasibility {
            steps: results,
            overall,
        },
        notes,
    })
}

/// What a complement's target turned out to be.
enum Resolved<'d> {
    Item(&'d Item),
    Process(&'d str),
    Location(&'d str),
    /// A parameter (`With SpatialAttitude=upright`), not an ID.
    Parameter,
    /// An owner that is neither Item nor Process (a User), as a Transact recipient.
    Owner,
}

/// The same target written again: ID, value and parameters alike (where it stands in the
/// statement aside).
fn same_complement(a: &Target, b: &Target) -> bool {
    a.id == b.id && a.value == b.value && a.params == b.params
}

/// The text of a statement a span covers (spans count characters, not bytes).
fn spanned(statement: &str, span: process_action::Span) -> String {
    statement
        .chars()
        .skip(span.start)
        .take(span.end.saturating_sub(span.start))
        .collect()
}

/// One step's verdict: the first check that fails gives its PA Status (the order is the
/// module's), else Ack, whose effect goes into `world` for the later steps.
fn judge_step(
    domain: &Domain,
    checks: &Checks,
    world: &mut World,
    step: &ProcessActionStep,
    space: Option<&str>,
    retained: &[(String, Triple)],
) -> Verdict {
    first_failure(domain, checks, world, step, space, retained).unwrap_or_else(|failed| failed)
}

/// The checks of one step in order, each an `Err` with the verdict that stops it; the last,
/// applying the step, gives Clash or Ack.
fn first_failure(
    domain: &Domain,
    checks: &Checks,
    world: &mut World,
    step: &ProcessActionStep,
    space: Option<&str>,
    retained: &[(String, Triple)],
) -> Result<Verdict, Verdict> {
    let statement = process_action::parse(&step.statement).map_err(|e| {
        verdict(
            PaStatus::FaultyReq,
            format!("the statement does not parse: {e}"),
        )
    })?;
    let rule = domain.action(statement.action).ok_or_else(|| {
        verdict(
            PaStatus::FaultyReq,
            format!(
                "{} is not an Action {} performs",
                statement.action, domain.file.m_instance
            ),
        )
    })?;
    complements_well_formed(rule, &statement, &step.statement)?;
    // IncID: every ID must be known, and no Item hidden by an earlier step.
    let mut resolved: Vec<(Preposition, &Target, Resolved)> = Vec::new();
    for c in &statement.complements {
        match resolve(domain, world, rule, c.preposition, &c.target) {
            Ok(r) => resolved.push((c.preposition, &c.target, r)),
            Err(reason) => return Err(verdict(PaStatus::IncID, reason)),
        }
    }
    if let Some(reason) = wrong_kind(rule, &statement, &resolved) {
        return Err(verdict(PaStatus::FaultyReq, reason));
    }
    let object = resolved.iter().find_map(|(p, _, r)| match (p, r) {
        (Preposition::Nil, Resolved::Item(item)) => Some(*item),
        _ => None,
    });
    qualifiers_match(world, &resolved)?;
    within_reach(domain, world, rule, object, &resolved, space)?;
    // InsRights.
    if let Err(reason) = &checks.rights {
        return Err(verdict(PaStatus::InsRights, reason.clone()));
    }
    if let Some(reason) = lacks_rights(domain, statement.action, &resolved) {
        return Err(verdict(PaStatus::InsRights, reason));
    }
    if let Some(item) = object {
        format_taken(domain, checks, world, rule, &statement, item)?;
    }
    post_received(domain, checks, rule, &statement, object)?;
    affordable(domain, checks, world, rule, &statement)?;
    Ok(applied(
        domain, world, rule, &statement, object, step, retained,
    ))
}

/// FaultyReq: the complements the Action needs are there, and none is given twice (With
/// carries parameters, so several may be given, but never the identical one twice:
/// MCP-BINDING section 5). `text` is the statement as written, for the Reason.
fn complements_well_formed(
    rule: &ActionRule,
    statement: &Statement,
    text: &str,
) -> Result<(), Verdict> {
    for needed in rule.required() {
        if statement.first(needed).is_none() {
            return Err(verdict(
                PaStatus::FaultyReq,
                format!("{} needs a {needed} complement", statement.action),
            ));
        }
    }
    for p in Preposition::ALL
        .into_iter()
        .filter(|p| *p != Preposition::With)
    {
        if statement.with_prep(p).count() > 1 {
            return Err(verdict(
                PaStatus::FaultyReq,
                format!("the {p} complement is given twice; a statement has one of each"),
            ));
        }
    }
    let withs: Vec<&Target> = statement.with_prep(Preposition::With).collect();
    if let Some(twice) = withs.iter().enumerate().find_map(|(i, t)| {
        withs[..i]
            .iter()
            .any(|e| same_complement(e, t))
            .then_some(t)
    }) {
        return Err(verdict(
            PaStatus::FaultyReq,
            format!(
                "the complement With {} is given twice; With may repeat only with different \
                 parameters",
                spanned(text, twice.span)
            ),
        ));
    }
    Ok(())
}

/// IncDQ: qualifiers given with the Item must match its own (its Format as the earlier
/// steps left it).
fn qualifiers_match(
    world: &World,
    resolved: &[(Preposition, &Target, Resolved)],
) -> Result<(), Verdict> {
    let Some((_, target, Resolved::Item(item))) =
        resolved.iter().find(|(p, _, _)| *p == Preposition::Nil)
    else {
        return Ok(());
    };
    for param in &target.params {
        let key = param.key.as_deref().unwrap_or("Format");
        let actual = if key == "Format" {
            world.formats.get(&item.item_id).cloned().flatten()
        } else {
            item.qualifier.get(key).cloned()
        };
        if actual.as_deref() != Some(param.value.as_str()) {
            return Err(verdict(
                PaStatus::IncDQ,
                format!(
                    "{} has {key} {}, not {}",
                    item.item_id,
                    actual.as_deref().unwrap_or("(none)"),
                    param.value
                ),
            ));
        }
    }
    Ok(())
}

/// LocOOR: every location (and the Item's own, where the step moves, animates or hides it)
/// within the requester's reach and the Space asked about.
fn within_reach(
    domain: &Domain,
    world: &World,
    rule: &ActionRule,
    object: Option<&Item>,
    resolved: &[(Preposition, &Target, Resolved)],
    space: Option<&str>,
) -> Result<(), Verdict> {
    let mut locations: Vec<(&str, &Target)> = resolved
        .iter()
        .filter_map(|(_, t, r)| match r {
            Resolved::Location(l) => Some((*l, *t)),
            _ => None,
        })
        .collect();
    let current = object.and_then(|i| world.position(&i.item_id).map(str::to_owned));
    if let (Some(item), Some(pos)) = (object, current.as_deref())
        && matches!(rule.effect, Effect::Move | Effect::Animate | Effect::Hide)
        && let Some((space_of, _)) = domain.m_location(pos)
        && !domain.file.requester.reach.contains(&space_of.space_id)
    {
        return Err(verdict(
            PaStatus::LocOOR,
            format!(
                "{} is at {pos} in {}, outside the requester's reach",
                item.item_id, space_of.space_id
            ),
        ));
    }
    locations.dedup_by_key(|(l, _)| *l);
    for (loc, target) in &locations {
        if let Some(v) = out_of_range(domain, loc, target, space) {
            return Err(v);
        }
    }
    Ok(())
}

/// QualNS: where the step places, moves, posts or converts `item`, the target takes its
/// format (a Convert with no Format to convert to is a faulty request).
fn format_taken(
    domain: &Domain,
    checks: &Checks,
    world: &World,
    rule: &ActionRule,
    statement: &Statement,
    item: &Item,
) -> Result<(), Verdict> {
    let format = world.formats.get(&item.item_id).cloned().flatten();
    let format = format.as_deref();
    match rule.effect {
        Effect::Place => location_takes(domain, statement.first(Preposition::At), item, format),
        Effect::Move => location_takes(domain, statement.first(Preposition::To), item, format),
        Effect::Post if checks.services.is_ok() => service_takes(domain, statement, item, format),
        Effect::Convert => convertible(domain, statement, item, format),
        _ => Ok(()),
    }
}

/// The M-Location an Item is placed at or moved to takes its format, if it names formats.
fn location_takes(
    domain: &Domain,
    to: Option<&Target>,
    item: &Item,
    format: Option<&str>,
) -> Result<(), Verdict> {
    if let Some(loc) = to.map(|t| t.id.as_str())
        && let Some((_, l)) = domain.m_location(loc)
        && let Some(formats) = &l.formats
        && !format.is_some_and(|f| formats.iter().any(|x| x == f))
    {
        return Err(verdict(
            PaStatus::QualNS,
            format!(
                "{loc} takes only {} Items; {} is {}",
                formats.join(" or "),
                item.item_id,
                format.unwrap_or("of no stated format")
            ),
        ));
    }
    Ok(())
}

/// The service an Item is posted to, where it takes the Item's class, takes its format.
fn service_takes(
    domain: &Domain,
    statement: &Statement,
    item: &Item,
    format: Option<&str>,
) -> Result<(), Verdict> {
    if let Some(process) = statement
        .first(Preposition::To)
        .and_then(|t| domain.process(&t.id))
        && let Some(accepts) = &process.accepts
        && accepts.classes.iter().any(|c| domain.is_a(&item.class, c))
        && !format.is_some_and(|f| accepts.formats.iter().any(|x| x == f))
    {
        return Err(verdict(
            PaStatus::QualNS,
            format!(
                "{} takes {} Items; {} is {}",
                process.process_id,
                accepts.formats.join(" or "),
                item.item_id,
                format.unwrap_or("of no stated format")
            ),
        ));
    }
    Ok(())
}

/// Convert: the domain converts the Item's format to the one asked (With Format=...).
fn convertible(
    domain: &Domain,
    statement: &Statement,
    item: &Item,
    format: Option<&str>,
) -> Result<(), Verdict> {
    let wanted = statement
        .with_prep(Preposition::With)
        .find(|t| t.id == "Format")
        .and_then(|t| t.value.clone());
    let Some(wanted) = wanted else {
        return Err(verdict(
            PaStatus::FaultyReq,
            "Convert needs With Format=<format>",
        ));
    };
    let possible = format
        .and_then(|f| domain.file.conversions.get(f))
        .is_some_and(|to| to.contains(&wanted));
    if !possible {
        return Err(verdict(
            PaStatus::QualNS,
            format!(
                "{} ({}) cannot be converted to {wanted}",
                item.item_id,
                format.unwrap_or("no format")
            ),
        ));
    }
    Ok(())
}

/// PostRef: a Post's receiving service exists, receives Posts and takes the Item's class
/// (or could not be asked).
fn post_received(
    domain: &Domain,
    checks: &Checks,
    rule: &ActionRule,
    statement: &Statement,
    object: Option<&Item>,
) -> Result<(), Verdict> {
    if rule.effect != Effect::Post {
        return Ok(());
    }
    if let Err(reason) = &checks.services {
        return Err(verdict(PaStatus::PostRef, reason.clone()));
    }
    let Some(item) = object else {
        return Ok(());
    };
    let to = statement
        .first(Preposition::To)
        .map(|t| t.id.as_str())
        .unwrap_or_default();
    match domain.process(to) {
        None => Err(verdict(
            PaStatus::PostRef,
            format!("{to} is not a service that receives Posts"),
        )),
        Some(p) => match &p.accepts {
            None => Err(verdict(
                PaStatus::PostRef,
                format!("{to} receives no Posts"),
            )),
            Some(a) if !a.classes.iter().any(|c| domain.is_a(&item.class, c)) => {
                let takes = if a.classes.is_empty() {
                    "nothing".to_owned()
                } else {
                    a.classes.join(", ")
                };
                Err(verdict(
                    PaStatus::PostRef,
                    format!(
                        "{to} refuses {} ({}); it takes {takes}",
                        item.item_id, item.class
                    ),
                ))
            }
            Some(_) => Ok(()),
        },
    }
}

/// InsValue: the wallet, as the earlier steps left it, holds the Action's price (or could
/// not be consulted for a priced Action).
fn affordable(
    domain: &Domain,
    checks: &Checks,
    world: &World,
    rule: &ActionRule,
    statement: &Statement,
) -> Result<(), Verdict> {
    if rule.price > 0.0
        && let Err(reason) = &checks.wallet
    {
        return Err(verdict(PaStatus::InsValue, reason.clone()));
    }
    if rule.price > world.wallet + 1e-9 {
        return Err(verdict(
            PaStatus::InsValue,
            format!(
                "{} costs {} {}; the wallet holds {} after the earlier steps",
                statement.action,
                amount(rule.price),
                domain.file.requester.wallet.currency,
                amount(world.wallet)
            ),
        ));
    }
    Ok(())
}

/// Clash with the state, then with the retained commitments; else Ack, and the step's
/// effect (and price) goes into `world`.
fn applied(
    domain: &Domain,
    world: &mut World,
    rule: &ActionRule,
    statement: &Statement,
    object: Option<&Item>,
    step: &ProcessActionStep,
    retained: &[(String, Triple)],
) -> Verdict {
    let mut next = world.clone();
    if let Err(reason) = apply(domain, &mut next, rule, statement, object, step.step.get()) {
        return verdict(PaStatus::Clash, reason);
    }
    for (id, t) in retained {
        if world.holds(t) == Some(true) && next.holds(t) == Some(false) {
            return verdict(
                PaStatus::Clash,
                format!("it would break commitment {id} ({t})"),
            );
        }
    }
    let cost = if rule.price > 0.0 {
        next.wallet -= rule.price;
        format!(
            "; costs {} {}, {} left",
            amount(rule.price),
            domain.file.requester.wallet.currency,
            amount(next.wallet)
        )
    } else {
        String::new()
    };
    let what = describe_effect(rule, statement, object, world);
    *world = next;
    verdict(PaStatus::Ack, format!("{what}{cost}"))
}

/// MCP-BINDING section 5: a target that is not of the kind its preposition needs is a faulty
/// request: an M-Location after At, From and To of the Actions that place and move, a Process
/// after Post's To, and an Item (not an M-Location or a Process) as what is placed, moved,
/// hidden, posted, transferred, converted or animated.
fn wrong_kind(
    rule: &ActionRule,
    statement: &Statement,
    resolved: &[(Preposition, &Target, Resolved)],
) -> Option<String> {
    let what = |r: &Resolved| match r {
        Resolved::Item(_) => "an Item",
        Resolved::Process(_) => "a Process",
        Resolved::Location(_) => "an M-Location",
        Resolved::Parameter => "a parameter",
        Resolved::Owner => "an owner",
    };
    let action = statement.action;
    let moves_items = !matches!(rule.effect, Effect::None);
    for (p, target, r) in resolved {
        let id = &target.id;
        let wanted = match (rule.effect, p) {
            (
                Effect::Place | Effect::Move,
                Preposition::At | Preposition::From | Preposition::To,
            ) => (!matches!(r, Resolved::Location(_))).then_some("an M-Location"),
            (Effect::Post, Preposition::To) => {
                (!matches!(r, Resolved::Process(_))).then_some("a Process that receives Posts")
            }
            (_, Preposition::Nil) if moves_items => {
                (!matches!(r, Resolved::Item(_))).then_some("an Item")
            }
            _ => None,
        };
        if let Some(wanted) = wanted {
            return Some(format!("{action} {p} takes {wanted}; {id} is {}", what(r)));
        }
    }
    None
}

fn amount(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

fn resolve<'d>(
    domain: &'d Domain,
    world: &World,
    rule: &ActionRule,
    prep: Preposition,
    target: &Target,
) -> Result<Resolved<'d>, String> {
    let id = target.id.as_str();
    if prep == Preposition::With && (target.value.is_some() || !target.params.is_empty()) {
        return Ok(Resolved::Parameter);
    }
    if let Some(item) = domain.item(id) {
        if let Some(step) = world.hidden.get(id) {
            return Err(format!(
                "{id} was hidden by step {step} and can no longer be named"
            ));
        }
        return Ok(Resolved::Item(item));
    }
    if let Some(process) = domain.process(id) {
        return Ok(Resolved::Process(&process.process_id));
    }
    if let Some((_, loc)) = domain.m_location(id) {
        return Ok(Resolved::Location(&loc.m_location_id));
    }
    if prep == Preposition::To
        && rule.effect == Effect::Transfer
        && domain
            .file
            .items
            .iter()
            .filter_map(|i| i.owner.as_deref())
            .any(|o| o == id)
    {
        return Ok(Resolved::Owner);
    }
    let hint = crate::protocol::spelling::closest(id, domain.all_ids())
        .map(|c| format!(" (did you mean {c}?)"))
        .unwrap_or_default();
    Err(format!(
        "{id} is not an Item, Process or M-Location of {}{hint}",
        domain.file.m_instance
    ))
}

fn out_of_range(
    domain: &Domain,
    loc: &str,
    target: &Target,
    space: Option<&str>,
) -> Option<Verdict> {
    let (space_of, m_location) = domain.m_location(loc)?;
    if !domain.file.requester.reach.contains(&space_of.space_id) {
        return Some(verdict(
            PaStatus::LocOOR,
            format!(
                "{loc} is in {}, outside the requester's reach",
                space_of.space_id
            ),
        ));
    }
    if let Some(space) = space
        && space != space_of.space_id
    {
        return Some(verdict(
            PaStatus::LocOOR,
            format!(
                "{loc} is in {}, outside {space}, the Space of the Request",
                space_of.space_id
            ),
        ));
    }
    // A point: MLoc:X(x=.., y=.., z=..) must lie within the M-Location.
    let coordinate = |name: &str| {
        target
            .params
            .iter()
            .find(|p| p.key.as_deref() == Some(name))
            .and_then(|p| p.value.parse::<f64>().ok())
    };
    if target
        .params
        .iter()
        .any(|p| matches!(p.key.as_deref(), Some("x" | "y" | "z")))
    {
        let b = &m_location.bounds;
        let point = [
            coordinate("x").unwrap_or(b.min[0]),
            coordinate("y").unwrap_or(b.min[1]),
            coordinate("z").unwrap_or(b.min[2]),
        ];
        if !b.contains(point) {
            return Some(verdict(
                PaStatus::LocOOR,
                format!(
                    "({}, {}, {}) lies outside {loc}, which spans ({}, {}, {})-({}, {}, {})",
                    point[0],
                    point[1],
                    point[2],
                    b.min[0],
                    b.min[1],
                    b.min[2],
                    b.max[0],
                    b.max[1],
                    b.max[2]
                ),
            ));
        }
    }
    None
}

/// Why the requester may not perform `action` on the Items and Processes it names, if so.
fn lacks_rights(
    domain: &Domain,
    action: &str,
    resolved: &[(Preposition, &Target, Resolved)],
) -> Option<String> {
    let requester = &domain.file.requester.process_id;
    let subject = resolved.iter().find_map(|(p, _, r)| match (p, r) {
        (Preposition::Nil, Resolved::Item(i)) => Some((i.item_id.as_str(), i.class.as_str())),
        (Preposition::Nil, Resolved::Process(id)) => {
            Some((*id, domain.class_of(id).unwrap_or_default()))
        }
        _ => None,
    })?;
    let (id, class) = subject;
    let applies = |r: &&crate::server::dac::domain::Right| {
        r.action == action
            && (r.item.as_deref() == Some(id)
                || r.class.as_deref().is_some_and(|c| domain.is_a(class, c)))
    };
    if let Some(r) = domain
        .file
        .rights
        .iter()
        .filter(applies)
        .find(|r| r.verb == Verb::MayNot)
    {
        let on = r
            .item
            .clone()
            .unwrap_or_else(|| format!("any {}", r.class.as_deref().unwrap_or_default()));
        return Some(format!("{requester} holds a May Not for {action} on {on}"));
    }
    if !domain
        .file
        .rights
        .iter()
        .filter(applies)
        .any(|r| r.verb == Verb::May)
    {
        return Some(format!(
            "{requester} holds no May for {action} on {id} ({class})"
        ));
    }
    None
}

/// Applies an Ack'ed step's effect to `world`, or says why the state forbids it (Clash).
fn apply(
    domain: &Domain,
    world: &mut World,
    rule: &ActionRule,
    statement: &Statement,
    object: Option<&Item>,
    step: u64,
) -> Result<(), String> {
    let Some(item) = object else {
        // Actions on Processes (Inform, Discover ...) change nothing.
        return Ok(());
    };
    let id = item.item_id.as_str();
    let target = |p: Preposition| {
        statement
            .first(p)
            .map(|t| t.id.as_str())
            .unwrap_or_default()
    };
    match rule.effect {
        Effect::Place => place(domain, world, id, target(Preposition::At))?,
        Effect::Move => move_item(domain, world, id, statement)?,
        Effect::Hide => {
            world.hidden.insert(id.to_owned(), step);
        }
        Effect::Post => {
            let to = target(Preposition::To);
            if let Some(already) = world.posted.get(id) {
                return Err(format!(
                    "{id} was already posted to {already}{}",
                    world.by_step(id)
                ));
            }
            world.posted.insert(id.to_owned(), to.to_owned());
        }
        Effect::Transfer => {
            let to = target(Preposition::To);
            if world.owners.get(id).cloned().flatten().as_deref() == Some(to) {
                return Err(format!("{id} already belongs to {to}"));
            }
            world.owners.insert(id.to_owned(), Some(to.to_owned()));
        }
        Effect::Convert => {
            let wanted = statement
                .with_prep(Preposition::With)
                .find(|t| t.id == "Format")
                .and_then(|t| t.value.clone());
            world.formats.insert(id.to_owned(), wanted);
        }
        Effect::Animate => {
            if world.position(id).is_none() {
                return Err(format!(
                    "{id} is not placed anywhere, so there is nothing to animate"
                ));
            }
        }
        Effect::None => {}
    }
    world.changed_by.insert(id.to_owned(), step);
    Ok(())
}

/// Whether `loc` has room for one more Item (its Capacity, if it has one, not reached).
fn room(domain: &Domain, world: &World, loc: &str) -> Result<(), String> {
    let cap = domain.m_location(loc).and_then(|(_, l)| l.capacity);
    let here = world.occupants(loc);
    match cap {
        Some(cap) if here.len() >= cap => Err(format!(
            "{loc} is full ({} of {cap}: {})",
            here.len(),
            here.join(", ")
        )),
        _ => Ok(()),
    }
}

/// Place: an Item not placed yet, still the requester's (not posted), where there is room.
fn place(domain: &Domain, world: &mut World, id: &str, at: &str) -> Result<(), String> {
    if let Some(pos) = world.position(id) {
        return Err(format!(
            "{id} is already placed at {pos}{}",
            world.by_step(id)
        ));
    }
    if world.posted.contains_key(id) {
        return Err(format!(
            "{id} was posted to {} and is no longer the requester's to place",
            world.posted[id]
        ));
    }
    room(domain, world, at)?;
    world.positions.insert(id.to_owned(), Some(at.to_owned()));
    Ok(())
}

/// Move: a placed Item, from where it is (the From given, if any, must say so) to another
/// M-Location with room.
fn move_item(
    domain: &Domain,
    world: &mut World,
    id: &str,
    statement: &Statement,
) -> Result<(), String> {
    let to = statement
        .first(Preposition::To)
        .map(|t| t.id.as_str())
        .unwrap_or_default();
    let Some(pos) = world.position(id).map(str::to_owned) else {
        return Err(format!("{id} is not placed anywhere, so it cannot move"));
    };
    if let Some(from) = statement.first(Preposition::From)
        && from.id != pos
    {
        return Err(format!(
            "{id} is at {pos}{}, not at {}",
            world.by_step(id),
            from.id
        ));
    }
    if pos == to {
        return Err(format!("{id} is already at {to}"));
    }
    room(domain, world, to)?;
    world.positions.insert(id.to_owned(), Some(to.to_owned()));
    Ok(())
}

fn describe_effect(
    rule: &ActionRule,
    statement: &Statement,
    object: Option<&Item>,
    before: &World,
) -> String {
    let Some(item) = object else {
        return format!("{} can be performed", statement.action);
    };
    let id = &item.item_id;
    let target = |p: Preposition| statement.first(p).map(|t| t.id.clone()).unwrap_or_default();
    match rule.effect {
        Effect::Place => format!("{id} can be placed at {}", target(Preposition::At)),
        Effect::Move => format!(
            "{id} can move from {} to {}",
            before.position(id).unwrap_or("?"),
            target(Preposition::To)
        ),
        Effect::Hide => format!("{id} can be hidden; later steps cannot name it"),
        Effect::Post => format!("{} takes {id}", target(Preposition::To)),
        Effect::Transfer => format!("{id} can pass to {}", target(Preposition::To)),
        Effect::Convert => format!("{id} can be converted"),
        Effect::Animate => format!("{id} can be animated"),
        Effect::None => format!("{} on {id} can be performed", statement.action),
    }
}
