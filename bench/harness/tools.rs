//! The reducers the harness runs: repromin and its peers, found on this machine.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Tool {
    Repromin,
    Cvise,
    Creduce,
    Picire,
    Lithium,
    Shrinkray,
}

impl Tool {
    pub(crate) fn parse(name: &str) -> Option<Tool> {
        Some(match name {
            "repromin" => Tool::Repromin,
            "cvise" => Tool::Cvise,
            "creduce" => Tool::Creduce,
            "picire" => Tool::Picire,
            "lithium" => Tool::Lithium,
            "shrinkray" => Tool::Shrinkray,
            _ => return None,
        })
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Tool::Repromin => "repromin",
            Tool::Cvise => "cvise",
            Tool::Creduce => "creduce",
            Tool::Picire => "picire",
            Tool::Lithium => "lithium",
            Tool::Shrinkray => "shrinkray",
        }
    }

    /// Whether the tool reduces a directory tree (the others take one file).
    pub(crate) fn reduces_trees(self) -> bool {
        matches!(self, Tool::Repromin | Tool::Shrinkray)
    }

    /// Whether the tool has a parallel mode.
    pub(crate) fn parallel(self) -> bool {
        self != Tool::Lithium
    }

    /// Whether the file being reduced only ever holds accepted states while the tool
    /// runs, so that polling its size shows the best size reached so far.
    pub(crate) fn pollable(self) -> bool {
        matches!(self, Tool::Cvise | Tool::Creduce | Tool::Shrinkray)
    }
}

/// A tool found on this machine.
pub(crate) struct Installed {
    pub(crate) tool: Tool,
    pub(crate) program: PathBuf,
    pub(crate) version: String,
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| {
            p.metadata()
                .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
                .unwrap_or(false)
        })
}

fn first_line_of(program: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())?
        .trim()
        .to_string();
    out.status.success().then_some(line)
}

/// Finds a tool, or says why it is not available.
pub(crate) fn detect(tool: Tool, repromin: &Path) -> Result<Installed, String> {
    let (program, version) = match tool {
        Tool::Repromin => {
            if !repromin.is_file() {
                return Err(format!(
                    "{} not found: run `cargo build --release` first",
                    repromin.display()
                ));
            }
            let v = first_line_of(repromin, &["--version"]).unwrap_or_else(|| "repromin".into());
            (repromin.to_path_buf(), v)
        }
        Tool::Lithium => {
            let python = find_on_path("python3").ok_or("python3 not on PATH")?;
            let probe = "import importlib.metadata as m, lithium; print('lithium-reducer', m.version('lithium-reducer'))";
            let v = first_line_of(&python, &["-c", probe])
                .ok_or("not installed (python3 cannot import lithium)")?;
            (python, v)
        }
        _ => {
            let program = find_on_path(tool.name()).ok_or("not installed (not on PATH)")?;
            let v = first_line_of(&program, &["--version"])
                .ok_or_else(|| format!("`{} --version` failed", program.display()))?;
            (program, v)
        }
    };
    Ok(Installed {
        tool,
        program,
        version,
    })
}
