//! A session file or journal replayed without holding it (`replay`): a first pass
//! (`outline`) keeps each dialogue's header and turn count, which is what the consent and
//! dialogue-number checks need; then `Feed` reads the file again on a thread of its own and
//! hands the chosen dialogues' turns over a bounded channel, one dialogue after the other.
//! Memory is a few turns, whatever the file's size.

use super::replay::RecordedTurns;
use super::walk::{self, Item};
use super::{Session, SessionError};
use crate::client::turn::Turn;
use std::collections::{BTreeMap, VecDeque};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use tokio::sync::mpsc;

/// A session without its turns: its servers, defaults and dialogues (each with `turns`
/// empty), and how many turns each dialogue has.
pub struct Outline {
    pub session: Session,
    pub turns: Vec<usize>,
}

/// Reads the file at `path` through, keeping only its outline (every turn is parsed, so a
/// damaged file is found before anything is replayed).
pub fn outline(path: &Path) -> Result<Outline, SessionError> {
    let mut session: Option<Session> = None;
    let mut headers = Vec::new();
    let mut turns: Vec<usize> = Vec::new();
    walk::walk(path, &mut |item| {
        match item {
            Item::Start(s) => session = Some(s),
            Item::Dialogue(i, d) => {
                // Places come in order; a gap (there is none today) would only waste a slot.
                if headers.len() <= i {
                    headers.resize_with(i + 1, || None);
                    turns.resize(i + 1, 0);
                }
                headers[i] = Some(d);
            }
            Item::Turn { dialogue, .. } => {
                if let Some(n) = turns.get_mut(dialogue) {
                    *n += 1;
                }
            }
            Item::Tools(_) | Item::Resource(..) => {}
        }
        ControlFlow::Continue(())
    })?;
    let mut session = session.unwrap_or_default();
    let (mut kept, mut counts) = (Vec::new(), Vec::new());
    for (header, n) in headers.into_iter().zip(turns) {
        if let Some(h) = header {
            kept.push(h);
            counts.push(n);
        }
    }
    session.dialogues = kept;
    Ok(Outline {
        session,
        turns: counts,
    })
}

/// How many turns are read ahead of the replay: enough that reading and sending overlap,
/// few enough that memory stays a few turns.
const AHEAD: usize = 16;

/// The turns of the dialogues asked for, read from the file as the replay takes them.
pub struct Feed {
    turns: mpsc::Receiver<(usize, Turn)>,
    /// Turns of a later dialogue read while an earlier one is replayed (a journal interleaves
    /// dialogues; a session file never does).
    early: BTreeMap<usize, VecDeque<Turn>>,
    reader: Option<std::thread::JoinHandle<Result<(), SessionError>>>,
}

impl Feed {
    /// Starts reading `path` for the turns of `wanted` (places, ascending), whose counts are
    /// `counts` (by place, from `outline`): reading stops once they have all been read.
    pub fn start(path: PathBuf, wanted: &[usize], counts: &[usize]) -> Feed {
        let (tx, rx) = mpsc::channel(AHEAD);
        let wanted: Vec<usize> = wanted.to_vec();
        let mut left: usize = wanted
            .iter()
            .map(|&i| counts.get(i).copied().unwrap_or(0))
            .sum();
        let reader = std::thread::spawn(move || {
            if left == 0 {
                return Ok(());
            }
            walk::walk(&path, &mut |item| {
                if let Item::Turn { dialogue, turn } = item
                    && wanted.binary_search(&dialogue).is_ok()
                {
                    // The replay has ended (and dropped the feed): nothing more to read.
                    if tx.blocking_send((dialogue, turn)).is_err() {
                        return ControlFlow::Break(());
                    }
                    left = left.saturating_sub(1);
                    if left == 0 {
                        return ControlFlow::Break(());
                    }
                }
                ControlFlow::Continue(())
            })
            .map(drop)
        });
        Feed {
            turns: rx,
            early: BTreeMap::new(),
            reader: Some(reader),
        }
    }

    /// The recorded turns of dialogue `place`, which has `count` of them. Dialogues are taken
    /// in ascending order; what is left of an earlier one is dropped.
    pub fn dialogue(&mut self, place: usize, count: usize) -> DialogueTurns<'_> {
        self.early.retain(|&d, _| d >= place);
        DialogueTurns {
            feed: self,
            place,
            left: count,
        }
    }

    /// Stops reading and says whether the file could be read to the end of what was asked.
    pub fn finish(mut self) -> Result<(), SessionError> {
        self.turns.close();
        // Turns still queued are dropped so that a blocked reader sees the channel closed.
        while self.turns.try_recv().is_ok() {}
        match self.reader.take().map(|r| r.join()) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(SessionError::Io("the reader of the file failed".into())),
            None => Ok(()),
        }
    }
}

/// One dialogue's recorded turns from a `Feed`.
pub struct DialogueTurns<'a> {
    feed: &'a mut Feed,
    place: usize,
    left: usize,
}

impl DialogueTurns<'_> {
    /// How many of the dialogue's turns (counted by `outline`) were not read: more than none
    /// when the replay stopped early, or when the file changed or failed between the passes.
    pub fn left(&self) -> usize {
        self.left
    }
}

impl RecordedTurns for DialogueTurns<'_> {
    async fn next(&mut self) -> Option<Turn> {
        if self.left == 0 {
            return None;
        }
        let turn = match self
            .feed
            .early
            .get_mut(&self.place)
            .and_then(VecDeque::pop_front)
        {
            Some(t) => t,
            None => loop {
                let (d, t) = self.feed.turns.recv().await?;
                if d == self.place {
                    break t;
                }
                if d > self.place {
                    self.feed.early.entry(d).or_default().push_back(t);
                }
                // An earlier dialogue's turn (its replay stopped early) is dropped.
            },
        };
        self.left -= 1;
        Some(turn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shipped tour three times, its dialogues cut to 3, 4 and 5 turns.
    fn three(dir: &Path) -> (PathBuf, Session) {
        let mut s = Session::load(Path::new("sessions/dac-tour.json")).unwrap();
        let one = s.dialogues[0].clone();
        s.dialogues = (0..3)
            .map(|i| {
                let mut d = one.clone();
                d.dialog_id = format!("d{i}");
                d.turns.truncate(3 + i);
                d
            })
            .collect();
        let path = dir.join("three.json");
        s.save(&path).unwrap();
        (path, s)
    }

    #[tokio::test]
    async fn the_outline_counts_and_the_feed_gives_the_dialogues_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let (path, whole) = three(dir.path());
        let o = outline(&path).unwrap();
        assert_eq!(o.turns, vec![3, 4, 5]);
        assert!(o.session.dialogues.iter().all(|d| d.turns.is_empty()));
        assert_eq!(o.session.servers, whole.servers);
        assert_eq!(o.session.dialogues[1].dialog_id, "d1");

        // Dialogue 0 taken only in part (a replay that stopped), then dialogue 2 whole.
        let mut feed = Feed::start(path, &[0, 2], &o.turns);
        let mut first = feed.dialogue(0, 3);
        assert_eq!(
            first.next().await.as_ref(),
            whole.dialogues[0].turns.first()
        );
        assert_eq!(first.left(), 2);
        let mut last = feed.dialogue(2, 5);
        let mut got = Vec::new();
        while let Some(t) = last.next().await {
            got.push(t);
        }
        assert_eq!(got, whole.dialogues[2].turns);
        assert_eq!(last.left(), 0);
        feed.finish().unwrap();
    }

    /// Each record read is checked against the session schema, as loading the whole file
    /// checks it: a file with one bad record is refused with the same mistakes, at the same
    /// pointers, whether it is read whole or streamed (issue 27: the streamed replay skipped
    /// the check).
    #[test]
    fn a_bad_record_is_named_as_the_whole_file_load_names_it() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = three(dir.path());
        let good = std::fs::read_to_string(&path).unwrap();
        let mut value: serde_json::Value = serde_json::from_str(&good).unwrap();
        type Damage = Box<dyn Fn(&mut serde_json::Value)>;
        let cases: Vec<(&str, Damage)> = vec![
            (
                "/dialogues/1/turns/2",
                Box::new(|v| v["dialogues"][1]["turns"][2]["bogus"] = 1.into()),
            ),
            (
                "/dialogues/2/turns/4/latencyMs",
                Box::new(|v| v["dialogues"][2]["turns"][4]["latencyMs"] = "slow".into()),
            ),
            (
                "/dialogues/1/turns/0/sent",
                Box::new(|v| v["dialogues"][1]["turns"][0]["sent"] = "yesterday".into()),
            ),
            (
                "/dialogues/2/interface",
                Box::new(|v| v["dialogues"][2]["interface"] = "xyz".into()),
            ),
            (
                "/dialogues/0",
                Box::new(|v| v["dialogues"][0]["colour"] = "red".into()),
            ),
            ("/", Box::new(|v| v["extra"] = true.into())),
        ];
        for (pointer, damage) in cases {
            let mut bad = value.clone();
            damage(&mut bad);
            let mut text = serde_json::to_string_pretty(&bad).unwrap();
            text.push('\n');
            std::fs::write(&path, &text).unwrap();
            let streamed = outline(&path).err().expect("a bad record is refused");
            let whole = Session::load(&path).unwrap_err();
            assert_eq!(streamed.to_string(), whole.to_string(), "{pointer}");
            let SessionError::Invalid(problems) = streamed else {
                panic!("{pointer}: {streamed}");
            };
            assert!(
                problems.iter().any(|(at, _)| at == pointer),
                "{pointer}: {problems:?}"
            );
        }
        // The good file still reads.
        value["name"] = "three".into();
        std::fs::write(&path, serde_json::to_string_pretty(&value).unwrap()).unwrap();
        assert_eq!(outline(&path).unwrap().turns, vec![3, 4, 5]);
    }

    #[test]
    fn a_damaged_file_has_no_outline() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = three(dir.path());
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, &text[..text.len() / 2]).unwrap();
        assert!(outline(&path).is_err());
    }
}
