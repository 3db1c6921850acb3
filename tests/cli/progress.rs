//! `progress.svg` in the sidecar: a well-formed picture of the reduction's course, with a
//! band for every run of every pass that ran, linked from REPROMIN.md.

use std::collections::BTreeSet;

use crate::util::{Area, report, run, stderr};

/// The `data-pass` of every band of the first panel, in order, read by an XML parser (which
/// fails on a document that is not well-formed), and the number of panels.
fn bands(svg: &str) -> (Vec<String>, usize) {
    let mut reader = quick_xml::Reader::from_str(svg);
    let (mut bands, mut panels) = (Vec::new(), 0);
    loop {
        match reader
            .read_event()
            .expect("progress.svg is well-formed XML")
        {
            quick_xml::events::Event::Start(e) | quick_xml::events::Event::Empty(e) => {
                let attr = |name: &str| {
                    e.attributes()
                        .map(|a| a.expect("a well-formed attribute"))
                        .find(|a| a.key.as_ref() == name)
                        .map(|a| {
                            a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                                .expect("escaped")
                                .into_owned()
                        })
                };
                match (e.name().as_ref(), attr("class").as_deref()) {
                    ("g", Some("panel")) => panels += 1,
                    ("rect", Some("band")) if panels == 1 => {
                        bands.push(attr("data-pass").expect("a band names its pass"));
                    }
                    _ => {}
                }
            }
            quick_xml::events::Event::Eof => break,
            _ => {}
        }
    }
    (bands, panels)
}

#[test]
fn the_sidecar_pictures_the_course_with_a_band_for_each_run_of_a_pass() {
    let area = Area::new();
    area.write(
        "src",
        &[
            (
                "main.py",
                "import helper\n\nprint('start')\nhelper.boom()\nprint('never')\n",
            ),
            (
                "helper.py",
                "def unused():\n    return 1\n\n\ndef boom():\n    raise RuntimeError('boom')\n",
            ),
            ("notes.txt", "nothing to do with it\n"),
        ],
    );
    let o = run(
        &[
            "reduce",
            "--level",
            "lines",
            "src",
            "out",
            "--no-progress",
            "--",
            "python3",
            "main.py",
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let sidecar = area.path("out.repromin");
    let svg = std::fs::read_to_string(sidecar.join("progress.svg")).unwrap();
    let (bands, panels) = bands(&svg);
    assert_eq!(panels, 4, "{svg}");
    // A band for every run of a pass, and the passes that ran are those with bands.
    let r = report(&area.path("out"));
    let phases = r["phase_statistics"].as_array().unwrap();
    let runs: u64 = phases.iter().map(|p| p["passes"].as_u64().unwrap()).sum();
    assert_eq!(bands.len() as u64, runs, "{bands:?}");
    let ran: BTreeSet<&str> = phases
        .iter()
        .filter(|p| p["passes"].as_u64().unwrap() > 0)
        .map(|p| p["phase"].as_str().unwrap())
        .collect();
    let banded: BTreeSet<&str> = bands.iter().map(String::as_str).collect();
    assert_eq!(banded, ran);
    assert!(ran.contains("files") && ran.contains("lines"), "{ran:?}");
    let md = std::fs::read_to_string(sidecar.join("REPROMIN.md")).unwrap();
    assert!(md.contains("[progress.svg](progress.svg)"), "{md}");
}
