//! `repromin completions SHELL`: the scripts are generated from the clap definitions and
//! snapshotted like `--help`; the bash one is also checked by bash itself.

use std::process::Command;

use repromin::exit_code::Exit;

use crate::util::{Area, require_tool, run, stderr, stdout, tool_runs};

/// The script `repromin completions SHELL` prints (it must succeed and say nothing else).
fn completions(shell: &str) -> String {
    let area = Area::new();
    let o = run(&["completions", shell], area.dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    stdout(&o)
}

#[test]
fn bash_completions() {
    insta::assert_snapshot!(completions("bash"));
}

#[test]
fn fish_completions() {
    insta::assert_snapshot!(completions("fish"));
}

#[test]
fn every_shell_gets_a_script_with_the_subcommands_options_but_not_the_internal_command() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = completions(shell);
        assert!(script.contains("no-trace"), "{shell}: reduce's options");
        assert!(
            script.contains("sandbox-user"),
            "{shell}: the gate's options"
        );
        // The reduce side's oracle is internal: hidden from help, and from completion too.
        assert!(!script.contains("check-test"), "{shell} offers check-test");
    }
}

#[test]
fn an_unknown_shell_is_a_usage_error_that_lists_the_shells() {
    let area = Area::new();
    let o = run(&["completions", "tcsh"], area.dir.path());
    assert_eq!(o.status.code(), Some(Exit::Usage as i32));
    assert_eq!(stdout(&o), "");
    let err = stderr(&o);
    assert!(err.contains("invalid value 'tcsh' for '<SHELL>'"), "{err}");
    assert!(
        err.contains("[possible values: bash, elvish, fish, powershell, zsh]"),
        "{err}"
    );
}

#[test]
fn a_missing_shell_is_a_usage_error() {
    let area = Area::new();
    let o = run(&["completions"], area.dir.path());
    assert_eq!(o.status.code(), Some(Exit::Usage as i32));
    assert!(stderr(&o).contains("<SHELL>"), "{}", stderr(&o));
}

/// What bash's completion offers for `words` (the last one being completed) once the
/// script is sourced: `COMP_WORDS` and `COMP_CWORD` set as bash sets them, then the
/// function the script registers for `repromin`, called as bash calls it.
fn bash_offers(script: &std::path::Path, words: &[&str]) -> Vec<String> {
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        r#"source "$1" || exit 90
function=$(complete -p repromin | sed -n 's/.* -F \([^ ]*\) .*/\1/p')
[ -n "$function" ] || exit 91
COMP_WORDS=({words})
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
COMP_LINE="${{COMP_WORDS[*]}}"
COMP_POINT=${{#COMP_LINE}}
COMPREPLY=()
"$function" repromin "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
[ ${{#COMPREPLY[@]}} -eq 0 ] || printf '%s\n' "${{COMPREPLY[@]}}""#,
        words = quoted.join(" ")
    );
    let o = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program, "bash"])
        .arg(script)
        .output()
        .unwrap();
    assert!(o.status.success(), "{words:?}: {o:?}");
    stdout(&o).lines().map(str::to_string).collect()
}

#[test]
fn the_bash_script_is_valid_and_completes_subcommands_options_and_values() {
    if !require_tool("bash", tool_runs("bash")) {
        return;
    }
    let area = Area::new();
    let script = area.path("repromin.bash");
    std::fs::write(&script, completions("bash")).unwrap();
    let check = Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
        .unwrap();
    assert!(check.status.success(), "bash -n: {}", stderr(&check));

    assert_eq!(
        bash_offers(&script, &["repromin", ""]).join(" "),
        "-h -V --help --version reduce doctor exec judge run line demo completions man worker help"
    );
    assert_eq!(bash_offers(&script, &["repromin", "red"]), ["reduce"]);
    assert_eq!(
        bash_offers(&script, &["repromin", "ch"]),
        Vec::<String>::new()
    );
    assert_eq!(
        bash_offers(&script, &["repromin", "reduce", "--no-t"]),
        ["--no-trace"]
    );
    assert_eq!(
        bash_offers(&script, &["repromin", "exec", "--side", ""]),
        ["base", "head", "mutants", "reduce"]
    );
    let shells = bash_offers(&script, &["repromin", "completions", ""]);
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        assert!(shells.iter().any(|s| s == shell), "{shells:?}");
    }
}
