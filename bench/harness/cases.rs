//! The benchmark cases: a directory of `input/`, `oracle.sh` and an optional `case.json`
//! each (bench/README.md).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::Res;
use crate::process::measure;

#[derive(Default, serde::Deserialize)]
#[serde(default)]
pub(crate) struct CaseJson {
    pub(crate) description: String,
    /// For single-file cases: the file under input/.
    pub(crate) file: Option<String>,
    /// Relative path (from the case directory) of an exact expected output: a file for
    /// single-file cases, a directory for trees.
    pub(crate) expected: Option<String>,
    /// Relative path (in the output) -> regex that the whole file must match.
    pub(crate) expected_regex: BTreeMap<String, String>,
    /// Design targets checked for repromin.
    pub(crate) targets: Targets,
    /// A script of the case directory that repromin runs as the failing command, learning
    /// its own oracle (signature and frames), instead of `--exit-code 0` on `oracle.sh`.
    pub(crate) repromin_command: Option<String>,
}

#[derive(Default, serde::Deserialize, Clone)]
#[serde(default)]
pub(crate) struct Targets {
    pub(crate) max_bytes: Option<u64>,
    pub(crate) max_files: Option<u64>,
    pub(crate) max_calls: Option<u64>,
    pub(crate) faster_than_peers: bool,
    pub(crate) expected: bool,
}

pub(crate) struct Case {
    pub(crate) name: String,
    pub(crate) dir: PathBuf,
    pub(crate) oracle: PathBuf,
    pub(crate) json: CaseJson,
    pub(crate) input_bytes: u64,
    pub(crate) input_files: u64,
}

impl Case {
    pub(crate) fn single_file(&self) -> Option<&str> {
        self.json.file.as_deref()
    }

    pub(crate) fn has_expectation(&self) -> bool {
        self.json.expected.is_some() || !self.json.expected_regex.is_empty()
    }
}

pub(crate) fn load_cases(dir: &Path, filter: &[String]) -> Res<Vec<Case>> {
    let entries =
        fs::read_dir(dir).map_err(|e| format!("cannot read cases dir {}: {e}", dir.display()))?;
    let mut dirs: Vec<PathBuf> = Vec::new();
    for entry in entries {
        let path = entry?.path();
        if path.join("oracle.sh").is_file() && path.join("input").exists() {
            dirs.push(path);
        }
    }
    dirs.sort();
    let mut cases = Vec::new();
    for path in dirs {
        let name = file_name(&path);
        if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        let json_path = path.join("case.json");
        let json: CaseJson = if json_path.is_file() {
            let text = fs::read_to_string(&json_path)?;
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", json_path.display()))?
        } else {
            CaseJson::default()
        };
        if let Some(file) = &json.file
            && !path.join("input").join(file).is_file()
        {
            return Err(format!("{}: input/{file} is not a file", path.display()).into());
        }
        let (input_bytes, input_files) = match &json.file {
            Some(file) => measure(&path.join("input").join(file))?,
            None => measure(&path.join("input"))?,
        };
        if let Some(script) = &json.repromin_command
            && !path.join(script).is_file()
        {
            return Err(format!("{}: {script} is not a file", path.display()).into());
        }
        cases.push(Case {
            name,
            oracle: path.join("oracle.sh"),
            dir: path,
            json,
            input_bytes,
            input_files,
        });
    }
    if cases.is_empty() {
        return Err(format!(
            "no case (a directory with input/ and oracle.sh) in {}",
            dir.display()
        )
        .into());
    }
    Ok(cases)
}

pub(crate) fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}
