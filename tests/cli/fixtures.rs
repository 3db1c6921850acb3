//! Fixture trees live in `fixtures/<case>/input/`; tests copy them into temp dirs.

use std::path::{Path, PathBuf};

/// The line the Python fixture's failure ends with.
pub(crate) const PYTHON_ERROR: &str = "lib.parser.ParseError: missing '=' in item 2: 'gamma'";

/// The command for the C tree: build into TMPDIR, then run.
/// Warnings that mean undefined behaviour are errors, so no cut can make the run flaky.
pub(crate) const C_COMMAND: &str = "gcc -Werror=implicit-function-declaration -Werror=implicit-int -Werror=return-type -Werror=format -o \"$TMPDIR/prog\" src/*.c && \"$TMPDIR/prog\"";

/// Copies `fixtures/<case>/input` to `dest`.
pub(crate) fn copy(case: &str, dest: &Path) -> PathBuf {
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(case)
        .join("input");
    copy_dir(&from, dest);
    dest.to_path_buf()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    let mut items: Vec<_> = std::fs::read_dir(from)
        .unwrap()
        .map(|e| e.unwrap())
        .collect();
    items.sort_by_key(std::fs::DirEntry::file_name);
    for item in items {
        let target = to.join(item.file_name());
        if item.file_type().unwrap().is_dir() {
            copy_dir(&item.path(), &target);
        } else {
            std::fs::copy(item.path(), &target).unwrap();
        }
    }
}
