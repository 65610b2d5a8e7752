//! The runner's part of *Certify this server*: the run in a task of its own, its progress
//! as events, Esc's stop by its token, and the report written where the pane says.

use super::Runner;
use crate::tui::certify::{CertifyEffect, CertifyEvent, RULE_TIMEOUT};
use crate::tui::event::Event;
use tokio_util::sync::CancellationToken;

impl Runner {
    pub(super) fn certify(&mut self, effect: CertifyEffect) {
        match effect {
            CertifyEffect::Start {
                run,
                spec,
                interface,
                overrides,
            } => {
                // One run at a time: a new one stops the old.
                if let Some((_, token)) = self.certifying.take() {
                    token.cancel();
                }
                let token = CancellationToken::new();
                self.certifying = Some((run, token.clone()));
                let mut connect = self.engine.options().clone();
                // Its dialogues are the certifier's: nothing of them in the explorer's log,
                // and no question of a server put to the person mid-run.
                connect.events = crate::client::event::EventSink::none();
                connect.ask = None;
                let options = crate::certify::Options {
                    spec,
                    connect,
                    overrides,
                    interface: Some(interface),
                    only: Vec::new(),
                    rule_timeout: RULE_TIMEOUT,
                };
                let events = self.events.clone();
                tokio::spawn(async move {
                    let tx = events.clone();
                    let progress = |p: crate::certify::Progress| {
                        use crate::certify::Progress as P;
                        let event = match p {
                            P::Learnt { total, learnt } => CertifyEvent::Learnt {
                                run,
                                total,
                                learnt: learnt.to_vec(),
                            },
                            P::Started { index, rule } => {
                                CertifyEvent::Started { run, index, rule }
                            }
                            P::Finished { index, result } => CertifyEvent::Finished {
                                run,
                                index,
                                result: Box::new(result.clone()),
                            },
                        };
                        let _ = tx.send(Event::Certify(event));
                    };
                    let result = crate::certify::certify(&options, &token, progress)
                        .await
                        .map(Box::new)
                        .map_err(|e| e.0);
                    let _ = events.send(Event::Certify(CertifyEvent::Done { run, result }));
                });
            }
            CertifyEffect::Stop { run } => {
                if let Some((r, token)) = &self.certifying
                    && *r == run
                {
                    token.cancel();
                    self.certifying = None;
                }
            }
            CertifyEffect::Write {
                path,
                text,
                overwrite,
            } => self.blocking(move || {
                if !overwrite && path.exists() {
                    return Event::Certify(CertifyEvent::Exists { path });
                }
                Event::Certify(CertifyEvent::Written {
                    result: crate::session::atomic::write(&path, text.as_bytes())
                        .map_err(|e| e.to_string()),
                    path,
                })
            }),
        }
    }
}
