//! `progress.svg`: the course of a reduction as a picture. Four panels: bytes left and
//! entries left (files, directories and links), each over time and over commands run; every
//! run of a pass is a band of its own colour behind the curves, and the legend names the
//! passes. Written by the small SVG writer below, which escapes every text and attribute.

use std::fmt::Write as _;

use crate::reduce::session::{Event, PassSpan};

/// What the picture shows: where the reduction started, its commits and its passes' runs.
pub struct Course<'a> {
    /// Regular-file bytes of the source.
    pub source_bytes: u64,
    /// Entries of the source.
    pub source_entries: u64,
    /// The commits, in order.
    pub events: &'a [Event],
    /// The runs of the passes, in order.
    pub spans: &'a [PassSpan],
}

/// The colours of the passes, in the order they first ran (repeated past the last).
const PALETTE: &[&str] = &[
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac", "#86bcb6", "#d37295", "#a0cbe8",
];

const WIDTH: f64 = 960.0;
const HEIGHT: f64 = 640.0;
const LEFT: f64 = 80.0;
const TOP: f64 = 60.0;
const PANEL_W: f64 = 380.0;
const PANEL_H: f64 = 190.0;
const GAP_X: f64 = 110.0;
const GAP_Y: f64 = 90.0;

/// `text` with `&`, `<`, `>`, `"` and `'` escaped, for an element's text or an attribute's
/// value; characters XML 1.0 does not allow are left out.
#[must_use]
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if u32::from(c) < 0x20 || matches!(c, '\u{FFFE}' | '\u{FFFF}') => {}
            c => out.push(c),
        }
    }
    out
}

/// A minimal SVG writer: elements with escaped attributes and text.
struct Svg {
    out: String,
}

impl Svg {
    fn attrs(&mut self, attrs: &[(&str, String)]) {
        for (name, value) in attrs {
            let _ = write!(self.out, " {name}=\"{}\"", escape(value));
        }
    }

    fn open(&mut self, tag: &str, attrs: &[(&str, String)]) {
        let _ = write!(self.out, "<{tag}");
        self.attrs(attrs);
        self.out.push_str(">\n");
    }

    fn close(&mut self, tag: &str) {
        let _ = writeln!(self.out, "</{tag}>");
    }

    fn leaf(&mut self, tag: &str, attrs: &[(&str, String)]) {
        let _ = write!(self.out, "<{tag}");
        self.attrs(attrs);
        self.out.push_str("/>\n");
    }

    fn text(&mut self, tag: &str, attrs: &[(&str, String)], text: &str) {
        let _ = write!(self.out, "<{tag}");
        self.attrs(attrs);
        let _ = writeln!(self.out, ">{}</{tag}>", escape(text));
    }
}

fn num(value: f64) -> String {
    format!("{value:.1}")
}

/// One axis of a panel: what a point is measured by.
#[derive(Clone, Copy)]
enum Along {
    Time,
    Commands,
}

#[derive(Clone, Copy)]
enum Left {
    Bytes,
    Entries,
}

/// A point of the curve: (milliseconds, commands, bytes, entries).
type Point = (u64, u64, u64, u64);

impl Along {
    fn of(self, p: &Point) -> u64 {
        match self {
            Along::Time => p.0,
            Along::Commands => p.1,
        }
    }

    fn span(self, s: &PassSpan) -> (u64, u64) {
        match self {
            Along::Time => (s.start_ms, s.end_ms),
            Along::Commands => (s.start_commands, s.end_commands),
        }
    }

    fn label(self, value: u64) -> String {
        match self {
            #[expect(clippy::cast_precision_loss, reason = "a display figure")]
            Along::Time => format!("{:.1} s", value as f64 / 1000.0),
            Along::Commands => format!("{value} commands"),
        }
    }
}

impl Left {
    fn of(self, p: &Point) -> u64 {
        match self {
            Left::Bytes => p.2,
            Left::Entries => p.3,
        }
    }

    fn title(self) -> &'static str {
        match self {
            Left::Bytes => "bytes left",
            Left::Entries => "entries left (files, directories, links)",
        }
    }
}

/// The picture of `course`, as an SVG document.
#[must_use]
pub fn svg(course: &Course<'_>) -> String {
    let mut points: Vec<Point> = vec![(0, 0, course.source_bytes, course.source_entries)];
    points.extend(
        course
            .events
            .iter()
            .map(|e| (e.elapsed_ms, e.commands, e.bytes_after, e.entries_after)),
    );
    // The curves go on to where the last pass ended.
    let end = |along: Along| {
        let spans = course.spans.iter().map(|s| along.span(s).1);
        let points = points.iter().map(|p| along.of(p));
        spans.chain(points).max().unwrap_or(0)
    };
    let mut passes: Vec<&str> = Vec::new();
    for span in course.spans {
        if !passes.contains(&span.pass.as_str()) {
            passes.push(&span.pass);
        }
    }
    let colour = |pass: &str| {
        let at = passes.iter().position(|p| *p == pass).unwrap_or(0);
        PALETTE[at % PALETTE.len()]
    };
    let mut svg = Svg { out: String::new() };
    svg.out
        .push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    svg.open(
        "svg",
        &[
            ("xmlns", "http://www.w3.org/2000/svg".into()),
            ("width", num(WIDTH)),
            ("height", num(HEIGHT)),
            ("viewBox", format!("0 0 {WIDTH} {HEIGHT}")),
            ("font-family", "sans-serif".into()),
            ("font-size", "12".into()),
        ],
    );
    svg.text(
        "title",
        &[],
        "The course of the reduction: what was left, over time and over commands",
    );
    svg.leaf(
        "rect",
        &[
            ("width", num(WIDTH)),
            ("height", num(HEIGHT)),
            ("fill", "#ffffff".into()),
        ],
    );
    svg.text(
        "text",
        &[
            ("x", num(LEFT)),
            ("y", num(28.0)),
            ("font-size", "16".into()),
        ],
        &format!(
            "The course of the reduction: {} commits in {} runs of {} passes",
            course.events.len(),
            course.spans.len(),
            passes.len()
        ),
    );
    for (row, left) in [Left::Bytes, Left::Entries].into_iter().enumerate() {
        for (col, along) in [Along::Time, Along::Commands].into_iter().enumerate() {
            #[expect(clippy::cast_precision_loss, reason = "two rows and two columns")]
            let (x0, y0) = (
                LEFT + col as f64 * (PANEL_W + GAP_X),
                TOP + row as f64 * (PANEL_H + GAP_Y),
            );
            panel(
                &mut svg,
                (x0, y0),
                along,
                left,
                &points,
                end(along),
                course,
                &colour,
            );
        }
    }
    // The legend: each pass once, in the order it first ran.
    let legend_y = TOP + 2.0 * PANEL_H + GAP_Y + 50.0;
    svg.open("g", &[("class", "legend".into())]);
    let (mut x, mut y) = (LEFT, legend_y);
    for pass in &passes {
        #[expect(clippy::cast_precision_loss, reason = "a pass name's length")]
        let width = 40.0 + 7.0 * pass.chars().count() as f64;
        if x + width > WIDTH - 20.0 && x > LEFT {
            (x, y) = (LEFT, y + 18.0);
        }
        svg.leaf(
            "rect",
            &[
                ("x", num(x)),
                ("y", num(y - 10.0)),
                ("width", "12".into()),
                ("height", "12".into()),
                ("fill", colour(pass).into()),
                ("fill-opacity", "0.5".into()),
            ],
        );
        svg.text("text", &[("x", num(x + 16.0)), ("y", num(y))], pass);
        x += width;
    }
    svg.close("g");
    svg.close("svg");
    svg.out
}

/// One panel at `origin`: the bands of the passes' runs, the curve of what was left, the
/// frame and the axes' figures.
#[expect(clippy::too_many_arguments, reason = "one panel's layout and data")]
fn panel(
    svg: &mut Svg,
    origin: (f64, f64),
    along: Along,
    left: Left,
    points: &[Point],
    end: u64,
    course: &Course<'_>,
    colour: &dyn Fn(&str) -> &'static str,
) {
    let (x0, y0) = origin;
    let top = points.iter().map(|p| left.of(p)).max().unwrap_or(0).max(1);
    let right = end.max(1);
    #[expect(clippy::cast_precision_loss, reason = "screen coordinates")]
    let x = |v: u64| x0 + PANEL_W * (v as f64 / right as f64);
    #[expect(clippy::cast_precision_loss, reason = "screen coordinates")]
    let y = |v: u64| y0 + PANEL_H * (1.0 - v as f64 / top as f64);
    let name = match along {
        Along::Time => "time",
        Along::Commands => "commands",
    };
    svg.open(
        "g",
        &[
            ("class", "panel".into()),
            ("data-left", left.title().into()),
            ("data-along", name.into()),
        ],
    );
    svg.text(
        "text",
        &[
            ("x", num(x0)),
            ("y", num(y0 - 8.0)),
            ("font-weight", "bold".into()),
        ],
        &format!("{} over {name}", left.title()),
    );
    for span in course.spans {
        let (from, to) = along.span(span);
        let (a, b) = (x(from), x(to));
        svg.open(
            "rect",
            &[
                ("class", "band".into()),
                ("data-pass", span.pass.clone()),
                ("x", num(a)),
                ("y", num(y0)),
                ("width", num((b - a).max(1.0))),
                ("height", num(PANEL_H)),
                ("fill", colour(&span.pass).into()),
                ("fill-opacity", "0.3".into()),
            ],
        );
        svg.text("title", &[], &span.pass);
        svg.close("rect");
    }
    // Steps: what was left holds until the next commit.
    let mut line = String::new();
    let mut last: Option<(f64, f64)> = None;
    for p in points {
        let (px, py) = (x(along.of(p)), y(left.of(p)));
        if let Some((_, ly)) = last {
            let _ = write!(line, " {},{}", num(px), num(ly));
        }
        let _ = write!(line, " {},{}", num(px), num(py));
        last = Some((px, py));
    }
    if let Some((_, ly)) = last {
        let _ = write!(line, " {},{}", num(x(end)), num(ly));
    }
    svg.leaf(
        "polyline",
        &[
            ("class", "curve".into()),
            ("points", line.trim().to_string()),
            ("fill", "none".into()),
            ("stroke", "#222222".into()),
            ("stroke-width", "1.5".into()),
        ],
    );
    svg.leaf(
        "rect",
        &[
            ("class", "frame".into()),
            ("x", num(x0)),
            ("y", num(y0)),
            ("width", num(PANEL_W)),
            ("height", num(PANEL_H)),
            ("fill", "none".into()),
            ("stroke", "#888888".into()),
        ],
    );
    let below = y0 + PANEL_H + 16.0;
    svg.text("text", &[("x", num(x0)), ("y", num(below))], "0");
    svg.text(
        "text",
        &[
            ("x", num(x0 + PANEL_W)),
            ("y", num(below)),
            ("text-anchor", "end".into()),
        ],
        &along.label(end),
    );
    for (value, at) in [(top, y0 + 4.0), (0, y0 + PANEL_H)] {
        svg.text(
            "text",
            &[
                ("x", num(x0 - 6.0)),
                ("y", num(at + 4.0)),
                ("text-anchor", "end".into()),
            ],
            &value.to_string(),
        );
    }
    svg.close("g");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(index: u64, phase: &str, at: (u64, u64), left: (u64, u64)) -> Event {
        Event {
            index,
            phase: phase.into(),
            change: format!("change {index}"),
            union: false,
            entries_after: left.1,
            bytes_after: left.0,
            family: None,
            candidate_confidence: None,
            elapsed_ms: at.0,
            commands: at.1,
        }
    }

    fn span(pass: &str, ms: (u64, u64), commands: (u64, u64)) -> PassSpan {
        PassSpan {
            pass: pass.into(),
            start_ms: ms.0,
            end_ms: ms.1,
            start_commands: commands.0,
            end_commands: commands.1,
        }
    }

    /// Every element of `svg`, as (name, attributes), read by an XML parser (which fails
    /// on a document that is not well-formed).
    fn elements(svg: &str) -> Vec<(String, Vec<(String, String)>)> {
        let mut reader = quick_xml::Reader::from_str(svg);
        let mut found = Vec::new();
        loop {
            match reader.read_event().expect("well-formed XML") {
                quick_xml::events::Event::Start(e) | quick_xml::events::Event::Empty(e) => {
                    let attrs = e
                        .attributes()
                        .map(|a| {
                            let a = a.expect("a well-formed attribute");
                            let value = a
                                .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                                .expect("escaped");
                            (a.key.as_ref().to_string(), value.into_owned())
                        })
                        .collect();
                    found.push((e.name().as_ref().to_string(), attrs));
                }
                quick_xml::events::Event::Eof => break,
                _ => {}
            }
        }
        found
    }

    #[test]
    fn text_and_attributes_are_escaped() {
        assert_eq!(
            escape(r#"<a href="x">&'"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&apos;"
        );
        assert_eq!(escape("a\u{1}b\u{FFFF}c\td"), "abc\td");
    }

    #[test]
    fn each_run_of_a_pass_is_a_band_in_every_panel_and_the_curves_step_down() {
        let events = [
            event(1, "files", (100, 3), (600, 5)),
            event(2, "lines", (900, 20), (200, 2)),
        ];
        // A pass name that needs escaping shows the writer does it everywhere.
        let spans = [
            span("files", (0, 400), (0, 8)),
            span("lines", (400, 1000), (8, 25)),
            span("files", (1000, 1100), (25, 27)),
            span("<odd & \"pass\">", (1100, 1200), (27, 28)),
        ];
        let svg = svg(&Course {
            source_bytes: 1000,
            source_entries: 9,
            events: &events,
            spans: &spans,
        });
        let found = elements(&svg);
        let attr = |attrs: &[(String, String)], name: &str| {
            attrs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        let bands: Vec<String> = found
            .iter()
            .filter(|(name, attrs)| name == "rect" && attr(attrs, "class") == "band")
            .map(|(_, attrs)| attr(attrs, "data-pass"))
            .collect();
        assert_eq!(bands.len(), 4 * spans.len(), "{svg}");
        assert_eq!(bands[..4], ["files", "lines", "files", "<odd & \"pass\">"]);
        let panels = found
            .iter()
            .filter(|(name, attrs)| name == "g" && attr(attrs, "class") == "panel");
        assert_eq!(panels.count(), 4);
        let curves: Vec<String> = found
            .iter()
            .filter(|(name, _)| name == "polyline")
            .map(|(_, attrs)| attr(attrs, "points"))
            .collect();
        assert_eq!(curves.len(), 4);
        // Bytes over time: from the source's 1000 at 0 down to 200, on to the end (1.2 s).
        let points: Vec<(f64, f64)> = curves[0]
            .split_whitespace()
            .map(|p| {
                let (x, y) = p.split_once(',').unwrap();
                (x.parse().unwrap(), y.parse().unwrap())
            })
            .collect();
        assert_eq!(points.len(), 6, "{points:?}");
        assert_eq!(points[0], (LEFT, TOP));
        assert_eq!(points[5], (LEFT + PANEL_W, TOP + PANEL_H * 0.8));
        assert!(
            points
                .windows(2)
                .all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1)
        );
        assert!(svg.contains("&lt;odd &amp; &quot;pass&quot;&gt;"));
        assert!(
            svg.contains("1.2 s") && svg.contains("28 commands"),
            "{svg}"
        );
        // The legend names each pass once.
        let legend = svg.split("class=\"legend\"").nth(1).unwrap();
        assert_eq!(legend.matches(">files</text>").count(), 1);
        assert_eq!(legend.matches(">lines</text>").count(), 1);
    }

    #[test]
    fn a_reduction_without_commits_or_passes_is_still_a_picture() {
        let svg = svg(&Course {
            source_bytes: 0,
            source_entries: 0,
            events: &[],
            spans: &[],
        });
        let found = elements(&svg);
        assert_eq!(found.iter().filter(|(n, _)| n == "polyline").count(), 4);
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
    }

    #[test]
    fn the_legend_names_every_pass_however_many_ran() {
        let names: Vec<String> = crate::reduce::PassName::ALL
            .iter()
            .map(|p| {
                serde_json::to_value(p)
                    .unwrap()
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        let spans: Vec<PassSpan> = names.iter().map(|n| span(n, (0, 1), (0, 1))).collect();
        let svg = svg(&Course {
            source_bytes: 10,
            source_entries: 1,
            events: &[],
            spans: &spans,
        });
        let legend = svg.split("class=\"legend\"").nth(1).unwrap();
        for name in &names {
            assert_eq!(
                legend.matches(&format!(">{name}</text>")).count(),
                1,
                "{name}"
            );
        }
        // Every legend entry is inside the picture.
        for found in elements(&svg) {
            if found.0 == "text" {
                let at = |k: &str| {
                    found
                        .1
                        .iter()
                        .find(|(n, _)| n == k)
                        .map_or(0.0, |(_, v)| v.parse::<f64>().unwrap())
                };
                assert!(at("x") < WIDTH && at("y") < HEIGHT, "{found:?}");
            }
        }
    }
}
