//! How the Export overlay is drawn: each block's title (the chosen one marked `›` and in
//! reverse video, seen without colour), its command wrapped whole (every character is the
//! command's: nothing is cut), and its notes; the keys at the bottom.

use super::ExportOverlay;
use crate::tui::app::App;
use crate::tui::hits::Hits;
use crate::tui::view::overlays::{centered, open_box};
use crate::tui::view::text::{cut, wrap_window};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

pub fn render(frame: &mut Frame, app: &App, o: &ExportOverlay, area: Rect, hits: &mut Hits) {
    let t = app.theme();
    let r = centered(
        area,
        area.width.saturating_sub(4).min(140),
        area.height.saturating_sub(2),
    );
    let title = format!(" Export {} as a command line ", o.what);
    let inner = open_box(frame, app, r, &title, hits);
    if inner.height < 2 {
        return;
    }
    let width = inner.width as usize;
    let height = inner.height as usize - 1;
    // Every line, with the block it belongs to (for clicks).
    let mut lines: Vec<(Line, Option<usize>)> = Vec::new();
    for (i, b) in o.blocks.iter().enumerate() {
        let chosen = i == o.selected;
        let mark = if chosen { "›" } else { " " };
        let style = if chosen {
            t.selected()
        } else {
            t.bold(t.colors.accent)
        };
        // The key that chooses it (keys.toml's), before its title.
        let key = app
            .keymap()
            .keys_in(&b.format.action(), crate::tui::action::Context::Overlay);
        let key = key.split(" / ").next().unwrap_or_default();
        let head = format!("{mark} {key} {}", b.title);
        lines.push((Line::styled(format!("{head:<width$}"), style), Some(i)));
        for l in wrap_window(&b.text, width.saturating_sub(2), 0, usize::MAX) {
            lines.push((
                Line::styled(format!("  {l}"), t.fg(t.colors.foreground)),
                Some(i),
            ));
        }
        for n in &b.notes {
            for (k, l) in wrap_window(n, width.saturating_sub(4), 0, usize::MAX)
                .into_iter()
                .enumerate()
            {
                let lead = if k == 0 { "  · " } else { "    " };
                lines.push((Line::styled(format!("{lead}{l}"), t.muted()), Some(i)));
            }
        }
        lines.push((Line::raw(""), None));
    }
    let max = lines.len().saturating_sub(height);
    hits.overlay_scroll_max = Some(max);
    let top = o.scroll.min(max);
    let mut shown = Vec::new();
    for (k, (line, block)) in lines.into_iter().skip(top).take(height).enumerate() {
        if let Some(i) = block {
            hits.overlay_rows
                .push((Rect::new(inner.x, inner.y + k as u16, inner.width, 1), i));
        }
        shown.push(line);
    }
    frame.render_widget(
        Paragraph::new(shown),
        Rect::new(inner.x, inner.y, inner.width, height as u16),
    );
    use crate::tui::action::Action as A;
    // The keys that choose (keys.toml's) only when there is a choice.
    let mut keys: Vec<(&[A], &str)> = Vec::new();
    if o.blocks.len() > 1 {
        keys.extend_from_slice(&[
            (&[A::Complete], "next"),
            (&[A::ExportSend], "send"),
            (&[A::ExportCurl], "curl"),
        ]);
    }
    keys.extend_from_slice(&[
        (&[A::CopyJson, A::Select], "copy"),
        (&[A::WriteJson], "write to a file"),
        (&[A::PageUp, A::PageDown], "scroll"),
        (&[A::Cancel], "close"),
    ]);
    let hint = crate::tui::overlay::key_hint(app.keymap(), &keys);
    frame.render_widget(
        Paragraph::new(Line::styled(cut(&hint, width), t.fg(t.colors.key_hint))),
        Rect::new(inner.x, inner.y + height as u16, inner.width, 1),
    );
}
