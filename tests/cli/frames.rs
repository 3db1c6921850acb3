//! The failure's identity includes where it was raised: the same message raised from
//! another place is another failure, so a reduction cannot slip to it.

use repromin::exit_code::Exit;

use crate::util::{Area, report, require_tool, run, sh_in, stderr, stdout, tool_runs};

/// `a` raises `ValueError: bad` and so does `b`; the program reaches `b` once the call to
/// `a` is gone, so reducing by the message alone is tempted to keep `b`'s raise.
const PYTHON: &[(&str, &str)] = &[
    (
        "a.py",
        "import os\n\n\ndef helper(x):\n    return x * 2\n\n\ndef a(x):\n    y = helper(x)\n    if y > 0:\n        raise ValueError(\"bad\")\n    return y\n",
    ),
    ("b.py", "def b(x):\n    raise ValueError(\"bad\")\n"),
    (
        "main.py",
        "import a\nimport b\n\nprint(\"start\")\na.a(3)\nb.b(4)\nprint(\"end\")\n",
    ),
];

/// The innermost frame of a Python traceback: `in NAME` of its last `File` line, and the
/// file's name.
fn innermost_python(output: &str) -> String {
    let line = output
        .lines()
        .rfind(|l| l.trim_start().starts_with("File \""))
        .unwrap_or_default();
    let file = line.split('"').nth(1).unwrap_or_default();
    let file = file.rsplit('/').next().unwrap_or_default();
    let name = line.rsplit(", in ").next().unwrap_or_default();
    format!("{name} ({file})")
}

/// Reduces `proj` into `out` at lines with `extra` options, `command` (one word, then the
/// program's file) as the failing command, and runs what was published the same way: its
/// exit code and output. Lines are enough for the slip, and characters would add minutes.
fn reduce_and_run(area: &Area, out: &str, extra: &[&str], command: &str) -> (i32, String) {
    let mut args = vec!["reduce", "proj", out, "--level", "lines"];
    args.extend_from_slice(extra);
    args.push("--");
    args.extend(command.split(' '));
    let o = run(&args, area.dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    sh_in(&area.path(out), command)
}

#[test]
fn a_python_reduction_keeps_the_place_the_failure_was_raised() {
    let area = Area::new();
    area.write("proj", PYTHON);
    let (code, output) = reduce_and_run(&area, "out", &[], "python3 main.py");
    assert_eq!(code, 1, "{output}");
    assert!(output.contains("ValueError: bad"), "{output}");
    assert_eq!(innermost_python(&output), "a (a.py)", "{output}");
    let r = report(&area.path("out"));
    assert_eq!(r["oracle"]["signature"], "ValueError: bad");
    assert_eq!(
        r["oracle"]["frames"],
        serde_json::json!([
            {"function": "a", "path": "a.py"},
            {"function": "<module>", "path": "main.py"}
        ])
    );
    let md = std::fs::read_to_string(area.path("out.repromin/REPROMIN.md")).unwrap();
    assert!(
        md.contains("- raised from `a (a.py)` < `<module> (main.py)` (innermost first)"),
        "{md}"
    );
    // By the message alone, the same reduction slips: what it publishes raises elsewhere.
    let (code, output) = reduce_and_run(&area, "slipped", &["--no-frames"], "python3 main.py");
    assert_eq!(code, 1, "{output}");
    assert!(output.contains("ValueError: bad"), "{output}");
    assert_ne!(innermost_python(&output), "a (a.py)", "{output}");
    assert_eq!(report(&area.path("slipped"))["oracle"].get("frames"), None);
}

#[test]
fn a_node_reduction_keeps_the_place_the_failure_was_raised() {
    if !require_tool("node", tool_runs("node")) {
        return;
    }
    let area = Area::new();
    area.write(
        "proj",
        &[
            (
                "a.js",
                "const fs = require(\"fs\");\n\nfunction helper(x) {\n  return x * 2;\n}\n\nfunction a(x) {\n  const y = helper(x);\n  if (y > 0) {\n    throw new Error(\"bad\");\n  }\n  return y;\n}\n\nmodule.exports = { a, helper };\n",
            ),
            (
                "b.js",
                "function b(x) {\n  throw new Error(\"bad\");\n}\n\nmodule.exports = { b };\n",
            ),
            (
                "main.js",
                "const { a } = require(\"./a\");\nconst { b } = require(\"./b\");\n\nconsole.log(\"start\");\na(3);\nb(4);\nconsole.log(\"end\");\n",
            ),
        ],
    );
    let innermost = |output: &str| {
        output
            .lines()
            .find(|l| l.trim_start().starts_with("at "))
            .map(|l| {
                let l = l.trim_start();
                let name = l[3..].split(' ').next().unwrap_or_default().to_string();
                let file = l.rsplit('/').next().unwrap_or_default();
                format!("{name} {}", file.split(':').next().unwrap_or_default())
            })
            .unwrap_or_default()
    };
    let (code, output) = reduce_and_run(&area, "out", &[], "node main.js");
    assert_eq!(code, 1, "{output}");
    assert_eq!(innermost(&output), "a a.js", "{output}");
    let r = report(&area.path("out"));
    assert_eq!(
        r["oracle"]["frames"][0],
        serde_json::json!({"function": "a", "path": "a.js"})
    );
    let (code, output) = reduce_and_run(&area, "slipped", &["--no-frames"], "node main.js");
    assert_eq!(code, 1, "{output}");
    assert!(output.contains("Error: bad"), "{output}");
    assert_ne!(innermost(&output), "a a.js", "{output}");
}

#[test]
fn an_expect_that_matches_several_failures_is_refused_naming_them() {
    let area = Area::new();
    area.write(
        "proj",
        &[
            ("a.py", "def a():\n    raise ValueError(\"bad\")\n"),
            ("b.py", "def b():\n    raise ValueError(\"bad\")\n"),
            (
                "main.py",
                "import traceback\nimport a\nimport b\n\ntry:\n    a.a()\nexcept ValueError:\n    traceback.print_exc()\nb.b()\n",
            ),
        ],
    );
    for command in ["reduce", "doctor"] {
        let mut args = vec![command, "proj"];
        if command == "reduce" {
            args.push("out");
        }
        args.extend(["--expect", "ValueError: bad", "--", "python3", "main.py"]);
        let o = run(&args, area.dir.path());
        assert_eq!(o.status.code(), Some(Exit::Usage as i32), "{}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains("--expect matches 2 failure blocks raised from different places"),
            "{err}"
        );
        assert!(
            err.contains("`ValueError: bad` at a (a.py) < <module> (main.py)"),
            "{err}"
        );
        assert!(
            err.contains("`ValueError: bad` at b (b.py) < <module> (main.py)"),
            "{err}"
        );
        assert!(!area.path("out").exists());
    }
    // An --expect that names one of them picks its block; doctor shows its frames.
    let o = run(
        &[
            "doctor",
            "proj",
            "--expect",
            r#"in b\n"#,
            "--",
            "python3",
            "main.py",
        ],
        area.dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("frames (innermost first): b (b.py) < <module> (main.py)"),
        "{}",
        stdout(&o)
    );
}
