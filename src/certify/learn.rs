//! What the certifier learns of a server before it tests it, as a generic client would: the
//! tool of the interface and how it was found, the MCP generation, the M-Instance, and what
//! the resources publish (MCP-BINDING section 1): the Spaces with their M-Locations and
//! Items, the rights, the wallet and prices where the domain file is published whole, the
//! Users. Nothing is assumed: a rule that needs what was not published is skipped, saying so.

use crate::client::connection::Connection;
use crate::client::generation::StateHome;
use crate::protocol::Interface;
use crate::protocol::conformance::Finding;
use crate::protocol::resources::{DAC_DOMAIN, DAC_SPACES, USR_CUES, USR_USER, USR_USERS};
use serde_json::Value;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default)]
pub struct Learnt {
    pub tool: String,
    /// The tool was found by the Header const of its inputSchema (else by its name).
    pub by_header: bool,
    /// MCP-BINDING section 1 findings on how the tool is declared.
    pub tool_findings: Vec<Finding>,
    pub protocol: String,
    pub state_home: Option<StateHome>,
    /// The server outlives a connection (HTTP): a dialogue kept by DialogID can go on from
    /// a new connection.
    pub outlives: bool,
    pub stdio: bool,
    pub m_instance: Option<String>,
    pub resources: Vec<String>,
    /// What went wrong reading resources.
    pub problems: Vec<String>,
    pub spaces: Vec<SpaceInfo>,
    pub items: BTreeMap<String, ItemInfo>,
    pub processes: Vec<String>,
    /// What each Process takes in a Post (`Accepts`), where the domain publishes it: `None`
    /// for a Process published without `Accepts` (it takes no Posts).
    pub accepts: BTreeMap<String, Option<Accepts>>,
    /// Class -> its superclasses, where the domain publishes its classes.
    pub superclasses: BTreeMap<String, Vec<String>>,
    /// Published rights (dac://domain `Rights`), when the domain publishes them.
    pub rights: Option<Vec<Right>>,
    pub wallet: Option<f64>,
    /// Action -> price, when the domain publishes its Actions with a Price.
    pub prices: BTreeMap<String, f64>,
    /// Relations published as facts (`Subject Predicate Object`).
    pub relations: Vec<(String, String, String)>,
    pub users: Vec<String>,
    pub cues: Vec<String>,
}

#[derive(Clone, Debug, Default)]
pub struct SpaceInfo {
    pub id: String,
    /// Whether the requester reaches it (`InReach`), when published.
    pub in_reach: Option<bool>,
    pub locations: Vec<LocationInfo>,
}

#[derive(Clone, Debug, Default)]
pub struct LocationInfo {
    pub id: String,
    pub capacity: Option<u64>,
    pub items: Vec<String>,
}

#[derive(Clone, Debug, Default)]
pub struct ItemInfo {
    pub class: Option<String>,
    pub position: Option<String>,
    pub format: Option<String>,
}

#[derive(Clone, Debug, Default)]
pub struct Accepts {
    pub classes: Vec<String>,
    pub formats: Vec<String>,
}

#[derive(Clone, Debug)]
pub struct Right {
    pub may: bool,
    pub action: String,
    pub item: Option<String>,
    pub class: Option<String>,
}

impl Learnt {
    pub fn space_of(&self, location: &str) -> Option<&SpaceInfo> {
        self.spaces
            .iter()
            .find(|s| s.locations.iter().any(|l| l.id == location))
    }

    pub fn location(&self, id: &str) -> Option<&LocationInfo> {
        self.spaces
            .iter()
            .flat_map(|s| &s.locations)
            .find(|l| l.id == id)
    }

    /// Every M-Location, in the order published.
    pub fn locations(&self) -> impl Iterator<Item = &LocationInfo> {
        self.spaces.iter().flat_map(|s| &s.locations)
    }

    /// Placed Items with where they are, in the order published.
    pub fn placed(&self) -> Vec<(&str, &str)> {
        self.locations()
            .flat_map(|l| l.items.iter().map(move |i| (i.as_str(), l.id.as_str())))
            .collect()
    }

    /// Whether an M-Location has room for one more Item, as far as was published.
    pub fn has_room(&self, location: &LocationInfo) -> bool {
        location
            .capacity
            .is_none_or(|c| (location.items.len() as u64) < c)
    }

    /// A class and every class above it, as published.
    pub fn ancestors(&self, class: &str) -> Vec<String> {
        let mut out = vec![class.to_owned()];
        let mut i = 0;
        while i < out.len() && out.len() < 64 {
            for s in self.superclasses.get(&out[i]).into_iter().flatten() {
                if !out.contains(s) {
                    out.push(s.clone());
                }
            }
            i += 1;
        }
        out
    }

    /// Whether the published rights let the requester do `action` to `item`: a May on it or
    /// a class above it, and no May Not. `None` when no rights are published.
    pub fn may(&self, action: &str, item: &str) -> Option<bool> {
        let rights = self.rights.as_ref()?;
        let classes = self
            .items
            .get(item)
            .and_then(|i| i.class.as_deref())
            .map(|c| self.ancestors(c))
            .unwrap_or_default();
        let covers = |r: &&Right| {
            r.action == action
                && (r.item.as_deref() == Some(item)
                    || r.class.as_ref().is_some_and(|c| classes.contains(c)))
        };
        let applying: Vec<&Right> = rights.iter().filter(covers).collect();
        Some(applying.iter().any(|r| r.may) && !applying.iter().any(|r| !r.may))
    }

    /// Sentences for the report's head.
    pub fn describe(&self, interface: Interface) -> Vec<String> {
        let mut out = vec![format!(
            "tool {} (found by {}), MCP {}",
            self.tool,
            if self.by_header {
                "its Header const"
            } else {
                "its name only"
            },
            self.protocol
        )];
        out.push(match &self.m_instance {
            Some(m) => format!("M-Instance {m}"),
            None => "no M-Instance published".into(),
        });
        match interface {
            Interface::Dac => {
                out.push(format!(
                    "{} Space(s), {} M-Location(s), {} Item(s) placed, {} Process(es); rights {}, wallet {}",
                    self.spaces.len(),
                    self.locations().count(),
                    self.placed().len(),
                    self.processes.len(),
                    if self.rights.is_some() {
                        "published"
                    } else {
                        "not published"
                    },
                    self.wallet
                        .map_or("not published".to_owned(), |w| w.to_string())
                ));
            }
            Interface::Usr => out.push(format!(
                "{} User(s), {} cue(s)",
                self.users.len(),
                self.cues.len()
            )),
        }
        out.extend(self.problems.iter().cloned());
        out
    }
}

/// Learns what `connection` says about itself and publishes.
pub async fn learn(connection: &Connection, interface: Interface) -> Learnt {
    let summary = &connection.summary;
    let tool = connection
        .tool_for(interface)
        .unwrap_or_default()
        .to_owned();
    let by_header = summary
        .tools
        .iter()
        .find(|t| t.name == tool.as_str())
        .and_then(|t| t.input_schema.get("properties"))
        .and_then(|p| p.get("Header"))
        .and_then(|h| h.get("const"))
        .and_then(Value::as_str)
        == Some(interface.header());
    let mut learnt = Learnt {
        tool_findings: crate::client::connection::tool_findings(&summary.tools, &summary.bkn_tools)
            .into_iter()
            .filter(|f| {
                f.pointer
                    .contains(&format!("/tools/{}/", tool.replace('/', "~1")))
            })
            .collect(),
        tool,
        by_header,
        protocol: summary.protocol_version.clone(),
        state_home: Some(connection.state_home()),
        outlives: connection.outlives_its_connections(),
        stdio: !matches!(
            connection.spec.transport,
            crate::client::spec::TransportSpec::Http(_)
        ),
        m_instance: summary
            .published
            .as_ref()
            .and_then(|p| p.m_instance.clone()),
        resources: summary.resources.clone(),
        ..Learnt::default()
    };
    match interface {
        Interface::Dac => learn_dac_resources(connection, &mut learnt).await,
        Interface::Usr => learn_usr_resources(connection, &mut learnt).await,
    }
    learnt
}

/// A resource of the server, or why it could not be read.
async fn read(connection: &Connection, uri: &str) -> Result<Value, String> {
    connection
        .read_resource(uri)
        .await
        .map_err(|e| format!("{uri} could not be read: {e}"))
}

/// BKN-DAC: the domain (`dac://domain`), then every Space it names or the server lists.
async fn learn_dac_resources(connection: &Connection, learnt: &mut Learnt) {
    let summary = &connection.summary;
    if summary.resources.iter().any(|r| r == DAC_DOMAIN) {
        match read(connection, DAC_DOMAIN).await {
            Ok(domain) => learnt.domain(&domain),
            Err(e) => learnt.problems.push(e),
        }
    }
    let mut spaces: Vec<String> = summary
        .resources
        .iter()
        .filter(|r| r.starts_with(DAC_SPACES))
        .cloned()
        .collect();
    for s in &learnt.spaces {
        let uri = format!("{DAC_SPACES}{}", s.id);
        if !spaces.contains(&uri) {
            spaces.push(uri);
        }
    }
    for uri in spaces {
        match read(connection, &uri).await {
            Ok(space) => learnt.space(&uri, &space),
            Err(e) => learnt.problems.push(e),
        }
    }
}

/// BKN-USR: the Users (the users resource, and each user resource listed) and the cues.
async fn learn_usr_resources(connection: &Connection, learnt: &mut Learnt) {
    let summary = &connection.summary;
    if let Ok(users) = read(connection, USR_USERS).await {
        for u in users
            .get("Users")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(id) = u.as_str().or_else(|| u.get("UserID")?.as_str()) {
                learnt.users.push(id.to_owned());
            }
        }
    }
    for r in &summary.resources {
        if let Some(id) = r.strip_prefix(USR_USER)
            && !id.is_empty()
            && !learnt.users.iter().any(|u| u == id)
        {
            learnt.users.push(id.to_owned());
        }
    }
    if summary.resources.iter().any(|r| r == USR_CUES)
        && let Ok(cues) = read(connection, USR_CUES).await
    {
        for c in cues.as_array().into_iter().flatten() {
            if let Some(cue) = c.as_str().or_else(|| c.get("Cue")?.as_str()) {
                learnt.cues.push(cue.to_owned());
            }
        }
    }
}

fn text(v: &Value, name: &str) -> Option<String> {
    v.get(name).and_then(Value::as_str).map(str::to_owned)
}

fn list<'a>(v: &'a Value, name: &str) -> impl Iterator<Item = &'a Value> {
    v.get(name).and_then(Value::as_array).into_iter().flatten()
}

fn id_of(v: &Value, names: &[&str]) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        _ => names.iter().find_map(|n| text(v, n)),
    }
}

impl Learnt {
    /// Reads `dac://domain`: the Spaces it names, and, where the domain file is published
    /// whole, Items, Processes, rights, wallet, prices and relations.
    fn domain(&mut self, d: &Value) {
        if self.m_instance.is_none() {
            self.m_instance = text(d, "MInstance");
        }
        self.domain_spaces(d);
        self.domain_items(d);
        self.domain_processes(d);
        self.domain_classes(d);
        self.domain_rights_and_prices(d);
    }

    /// The domain's Spaces, their M-Locations (with capacities), and whether each is within
    /// the requester's reach (where the domain says).
    fn domain_spaces(&mut self, d: &Value) {
        let reach: Option<Vec<String>> = d
            .get("Requester")
            .and_then(|r| r.get("Reach"))
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            });
        for s in list(d, "Spaces") {
            let Some(id) = id_of(s, &["SpaceID"]) else {
                continue;
            };
            let locations = list(s, "MLocations")
                .filter_map(|l| {
                    Some(LocationInfo {
                        id: id_of(l, &["MLocationID"])?,
                        capacity: l.get("Capacity").and_then(Value::as_u64),
                        items: Vec::new(),
                    })
                })
                .collect();
            self.spaces.push(SpaceInfo {
                in_reach: reach.as_ref().map(|r| r.contains(&id)),
                id,
                locations,
            });
        }
    }

    /// The Items: class, position and format of each.
    fn domain_items(&mut self, d: &Value) {
        for i in list(d, "Items") {
            if let Some(id) = id_of(i, &["ItemID"]) {
                let entry = self.items.entry(id).or_default();
                entry.class = text(i, "Class");
                entry.position = text(i, "Position");
                entry.format = i
                    .get("Qualifier")
                    .and_then(|q| q.get("Format"))
                    .and_then(Value::as_str)
                    .map(str::to_owned);
            }
        }
    }

    /// The Processes, and what each accepts (classes and formats) where it is published.
    fn domain_processes(&mut self, d: &Value) {
        for p in list(d, "Processes") {
            if let Some(id) = id_of(p, &["ProcessID"]) {
                if p.is_object() {
                    let strings = |a: Option<&Value>, name: &str| -> Vec<String> {
                        list(a.unwrap_or(&Value::Null), name)
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect()
                    };
                    let accepts = p.get("Accepts").map(|a| Accepts {
                        classes: strings(Some(a), "Classes"),
                        formats: strings(Some(a), "Formats"),
                    });
                    self.accepts.insert(id.clone(), accepts);
                }
                self.processes.push(id);
            }
        }
    }

    /// The classes and their superclasses.
    fn domain_classes(&mut self, d: &Value) {
        for c in list(d, "Classes") {
            if let Some(id) = text(c, "ClassID") {
                let supers = list(c, "Superclasses")
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect();
                self.superclasses.insert(id, supers);
            }
        }
    }

    /// The Rights (where published), the requester's wallet, the prices of the Actions and
    /// the relations.
    fn domain_rights_and_prices(&mut self, d: &Value) {
        if d.get("Rights").is_some() {
            self.rights = Some(
                list(d, "Rights")
                    .filter_map(|r| {
                        Some(Right {
                            may: text(r, "Verb")? == "May",
                            action: text(r, "Action")?,
                            item: text(r, "Item"),
                            class: text(r, "Class"),
                        })
                    })
                    .collect(),
            );
        }
        self.wallet = d
            .get("Requester")
            .and_then(|r| r.get("Wallet"))
            .and_then(|w| w.get("Amount"))
            .and_then(Value::as_f64);
        for a in list(d, "Actions") {
            if let (Some(action), Some(price)) =
                (text(a, "Action"), a.get("Price").and_then(Value::as_f64))
            {
                self.prices.insert(action, price);
            }
        }
        for r in list(d, "Relations") {
            if let (Some(s), Some(p), Some(o)) =
                (text(r, "Subject"), text(r, "Predicate"), text(r, "Object"))
            {
                self.relations.push((s, p, o));
            }
        }
    }

    /// Reads `dac://spaces/<SpaceID>`: its M-Locations with the Items there.
    fn space(&mut self, uri: &str, s: &Value) {
        let id = text(s, "SpaceID").unwrap_or_else(|| uri[DAC_SPACES.len()..].to_owned());
        let mut locations = Vec::new();
        for l in list(s, "MLocations") {
            let Some(loc) = id_of(l, &["MLocationID"]) else {
                continue;
            };
            let items: Vec<String> = list(l, "Items")
                .filter_map(|i| id_of(i, &["ItemID", "EntityID"]))
                .collect();
            for i in &items {
                let entry = self.items.entry(i.clone()).or_default();
                entry.position = Some(loc.clone());
                if entry.class.is_none() {
                    entry.class = l
                        .get("Items")
                        .and_then(Value::as_array)
                        .and_then(|a| a.iter().find(|x| text(x, "ItemID").as_deref() == Some(i)))
                        .and_then(|x| text(x, "Class"));
                }
            }
            for p in list(l, "Processes") {
                if let Some(p) = id_of(p, &["ProcessID"])
                    && !self.processes.contains(&p)
                {
                    self.processes.push(p);
                }
            }
            locations.push(LocationInfo {
                id: loc,
                capacity: l.get("Capacity").and_then(Value::as_u64),
                items,
            });
        }
        for name in ["UnplacedItems", "Items", "Entities"] {
            for i in list(s, name) {
                if let Some(item) = id_of(i, &["ItemID"]) {
                    self.items.entry(item).or_default();
                }
            }
        }
        let in_reach = s.get("InReach").and_then(Value::as_bool);
        match self.spaces.iter_mut().find(|x| x.id == id) {
            Some(known) => {
                known.in_reach = in_reach.or(known.in_reach);
                if !locations.is_empty() {
                    known.locations = locations;
                }
            }
            None => self.spaces.push(SpaceInfo {
                id,
                in_reach,
                locations,
            }),
        }
    }
}
