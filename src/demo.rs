//! `repromin demo`: a small project with a real bug, reduced end to end.
//!
//! The project is a little Python shop: a catalog, a cart, coupons, a report, docs and
//! tests. Its bug is real: a coupon can be applied twice, which drives the total negative and
//! makes `main.py` raise. The demo writes the project into a temporary directory, reduces it
//! with the default same-failure oracle and prints what was removed and the figures. Its
//! progress goes through [`Console`]; errors are returned to the command line, which renders
//! them and picks the exit code.

use std::fmt::Write as _;
use std::path::Path;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::console::Console;
use crate::reduce::{ReduceError, ReduceOptions};
use crate::tree::{Node, TreeError};

/// An error that ends the demo.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// The reduction of the demo project failed.
    #[error(transparent)]
    Reduce(#[from] ReduceError),
    /// The demo project could not be written.
    #[error(transparent)]
    Tree(#[from] TreeError),
    /// git could not be started.
    #[error("the demo needs git")]
    GitMissing(#[source] std::io::Error),
    /// A git command of the gate part failed.
    #[error("git {args} failed: {stderr}")]
    Git {
        /// The git arguments, space-separated.
        args: String,
        /// What git printed on stderr, trimmed.
        stderr: String,
    },
}

/// What the demo tells after its progress: the gate part of the story, for stdout.
#[derive(Clone, Debug)]
pub(crate) struct DemoSummary {
    /// The pull request, the gate's table, the certificate and the line a bot reads.
    pub gate: String,
}

/// The demo project, as (path, contents).
pub(crate) const PROJECT: &[(&str, &str)] = &[
    (
        "main.py",
        r#""""Print the receipt for today's basket."""
from shop.catalog import load_catalog
from shop.cart import Cart
from shop import receipt


def main():
    catalog = load_catalog()
    cart = Cart(catalog)
    cart.add("apple", 3)
    cart.add("pear", 2)
    cart.add("bread", 1)
    # A loyal customer scans the same coupon twice at the till.
    cart.apply_coupon("SAVE5")
    cart.apply_coupon("SAVE5")
    print(receipt.render(cart))


if __name__ == "__main__":
    main()
"#,
    ),
    (
        "shop/__init__.py",
        "\"\"\"A very small shop.\"\"\"\n\n__version__ = \"0.3.1\"\n",
    ),
    (
        "shop/catalog.py",
        r#""""Prices, in euros."""

PRICES = {
    "apple": 0.40,
    "pear": 0.55,
    "bread": 2.10,
    "milk": 1.05,
    "cheese": 4.80,
    "coffee": 6.20,
}


def load_catalog():
    """Return a copy of the price list."""
    return dict(PRICES)


def cheapest(catalog):
    """The cheapest item, by price."""
    return min(catalog, key=catalog.get)
"#,
    ),
    (
        "shop/coupons.py",
        r#""""Coupon codes and what they take off."""

COUPONS = {
    "SAVE5": 5.00,
    "SAVE2": 2.00,
    "STUDENT": 1.50,
}


def discount(code):
    """The amount a coupon takes off, or zero for an unknown code."""
    return COUPONS.get(code, 0.0)
"#,
    ),
    (
        "shop/cart.py",
        r#""""The shopping cart."""
from shop import coupons


class Cart:
    def __init__(self, catalog):
        self.catalog = catalog
        self.lines = []
        self.discounts = []

    def add(self, item, quantity=1):
        if item not in self.catalog:
            raise KeyError(item)
        self.lines.append((item, quantity))

    def subtotal(self):
        return sum(self.catalog[item] * qty for item, qty in self.lines)

    def apply_coupon(self, code):
        # Bug: nothing stops the same code from being applied twice.
        self.discounts.append(coupons.discount(code))

    def total(self):
        total = self.subtotal() - sum(self.discounts)
        if total < 0:
            raise ValueError(f"cart total is negative: {total:.2f}")
        return total
"#,
    ),
    (
        "shop/receipt.py",
        r#""""Formatting receipts."""


def money(amount):
    return f"{amount:8.2f} EUR"


def render(cart):
    rows = [f"{item:<10} x{qty:<3} {money(cart.catalog[item] * qty)}" for item, qty in cart.lines]
    rows.append("-" * 28)
    rows.append(f"{'total':<15}{money(cart.total())}")
    return "\n".join(rows)
"#,
    ),
    (
        "shop/util.py",
        r#""""Helpers that the shop does not need today."""


def chunks(items, size):
    for start in range(0, len(items), size):
        yield items[start:start + size]


def percent(part, whole):
    return 100.0 * part / whole if whole else 0.0
"#,
    ),
    (
        "tests/test_cart.py",
        r#"from shop.catalog import load_catalog
from shop.cart import Cart


def test_subtotal():
    cart = Cart(load_catalog())
    cart.add("apple", 2)
    assert round(cart.subtotal(), 2) == 0.80
"#,
    ),
    (
        "docs/guide.md",
        "# Shop guide\n\nAdd items to a cart, apply coupons, print a receipt.\n\n## Coupons\n\nEach code takes a fixed amount off the total.\n",
    ),
    (
        "README.md",
        "# shop\n\nA tiny shop used to show how repromin reduces a failing project.\n\nRun `python3 main.py`.\n",
    ),
    (
        "setup.cfg",
        "[metadata]\nname = shop\nversion = 0.3.1\n\n[options]\npackages = shop\n",
    ),
];

/// Writes the demo project into `dir`.
///
/// # Errors
/// I/O failures.
pub(crate) fn write_project(dir: &Path) -> Result<(), TreeError> {
    for (path, text) in PROJECT {
        write(dir, path, text)?;
    }
    Ok(())
}

/// The Python interpreter the demo runs: the real executable behind `python3` (or
/// `python`), so that each of the reduction's hundreds of runs does not pay for a version
/// manager's shim (pyenv's costs about 100 ms a call); the bare name when it cannot tell.
fn python() -> String {
    for candidate in ["python3", "python"] {
        let found = std::process::Command::new(candidate)
            .args(["-c", "import sys; print(sys.executable)"])
            .output();
        if let Ok(out) = found
            && out.status.success()
        {
            let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
            if Path::new(&path).is_absolute() && Path::new(&path).is_file() {
                return path;
            }
            return candidate.to_string();
        }
    }
    "python3".to_string()
}

/// Runs the demo: prints its first part through `console` and returns the gate part.
///
/// # Errors
/// The project cannot be written, git is missing or fails, or the reduction fails.
pub(crate) fn run(
    console: &Console,
    interrupt: &Arc<AtomicBool>,
) -> Result<DemoSummary, DemoError> {
    let temp = crate::scratch::Scratch::new("demo").map_err(|source| TreeError::Io {
        action: "create a directory in",
        path: std::env::temp_dir(),
        source,
    })?;
    let source = temp.path().join("shop");
    write_project(&source)?;
    let output = temp.path().join("shop.min");
    let python = python();
    let options = ReduceOptions::new(
        source.clone(),
        output.clone(),
        vec![python.clone(), "main.py".into()],
    );
    console.err(&format!(
        "demo: a small Python shop with a real bug, in {}\n      command: {python} main.py (it raises because a coupon can be applied twice)\n      reducing with {} jobs...",
        source.display(),
        options.jobs
    ));
    let reduction = crate::reduce::reduce(&options, interrupt, console.observer())?;
    let published = crate::export::publish(&reduction, &options)?;
    let r = &published.report;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "learned failure signature: {}",
        r.oracle.signature.as_deref().unwrap_or("-")
    );
    let _ = writeln!(
        out,
        "before: {} files, {} bytes\nafter:  {} files, {} bytes",
        r.source.files, r.source.bytes, r.output.files, r.output.bytes
    );
    let _ = writeln!(
        out,
        "cost:   {} candidates, {} commands run, {} cache hits, {} commits, {:.1} s",
        r.attempts,
        r.oracle_samples,
        r.cache_hits,
        r.accepted_mutations,
        r.reduce_ms as f64 / 1000.0
    );
    let deleted: Vec<String> = r
        .edits
        .iter()
        .filter_map(|e| match e {
            crate::reduce::edits::Edit::Delete { path } => Some(path.clone()),
            crate::reduce::edits::Edit::DeleteBytes { .. }
            | crate::reduce::edits::Edit::Replace { .. } => None,
        })
        .collect();
    let _ = writeln!(out, "deleted: {}", deleted.join(", "));
    let _ = writeln!(out, "\nwhat the failure needs:");
    for (path, entry) in &reduction.tree.entries {
        if let Node::File { data, .. } = &entry.node {
            let _ = writeln!(out, "\n--- {path}");
            let _ = write!(out, "{}", String::from_utf8_lossy(data));
        }
    }
    let _ = writeln!(
        out,
        "\nthe full report (report.json, REPROMIN.md) was written beside the result and removed with the demo directory"
    );
    console.out(&out);
    console.err("\ndemo, part 2: the fix as a pull request, through the gate");
    let gate = gate_demo(temp.path(), &python, interrupt)?;
    Ok(DemoSummary { gate })
}

/// A tiny test runner for the demo repository: runs `test_*` functions and writes JUnit,
/// so the demo needs nothing beyond python3. It escapes attributes itself: importing
/// `xml.sax.saxutils` would load `urllib`, a quarter of the cost of every run.
const RUNNER: &str = r#"import importlib.util, sys


def quoteattr(text):
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return '"%s"' % text.replace('"', "&quot;")


report, files = sys.argv[1], sys.argv[2:]
sys.path.insert(0, ".")
cases = []
failed = False
for path in files:
    spec = importlib.util.spec_from_file_location("t", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        cases.append((path, "load", repr(exc)))
        failed = True
        continue
    for name in sorted(n for n in dir(module) if n.startswith("test_")):
        try:
            getattr(module, name)()
            cases.append((path, name, None))
        except Exception as exc:
            cases.append((path, name, "%s: %s" % (type(exc).__name__, exc)))
            failed = True
with open(report, "w") as out:
    out.write("<testsuites><testsuite name='demo'>")
    for path, name, error in cases:
        out.write("<testcase file=%s classname=%s name=%s>" % (quoteattr(path), quoteattr(path), quoteattr(name)))
        if error:
            out.write("<failure message=%s/>" % quoteattr(error))
        out.write("</testcase>")
    out.write("</testsuite></testsuites>")
sys.exit(1 if failed else 0)
"#;

const CART_FIXED: &str = r#""""The shopping cart."""
from shop import coupons


class Cart:
    def __init__(self, catalog):
        self.catalog = catalog
        self.lines = []
        self.discounts = {}

    def add(self, item, quantity=1):
        if item not in self.catalog:
            raise KeyError(item)
        self.lines.append((item, quantity))

    def subtotal(self):
        return sum(self.catalog[item] * qty for item, qty in self.lines)

    def apply_coupon(self, code):
        # A code counts once, however often it is scanned.
        self.discounts[code] = coupons.discount(code)

    def total(self):
        total = self.subtotal() - sum(self.discounts.values())
        if total < 0:
            raise ValueError(f"cart total is negative: {total:.2f}")
        return total
"#;

const COUPON_TEST: &str = r#"from shop.catalog import load_catalog
from shop.cart import Cart


def test_a_coupon_counts_once():
    cart = Cart(load_catalog())
    cart.add("cheese", 2)
    cart.apply_coupon("SAVE5")
    cart.apply_coupon("SAVE5")
    assert round(cart.total(), 2) == 4.60


def test_subtotal():
    cart = Cart(load_catalog())
    cart.add("apple", 2)
    assert round(cart.subtotal(), 2) == 0.80
"#;

fn git(dir: &Path, args: &[&str]) -> Result<String, DemoError> {
    let out = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=demo",
            "-c",
            "user.email=demo@example.com",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(DemoError::GitMissing)?;
    if !out.status.success() {
        return Err(DemoError::Git {
            args: args.join(" "),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn write(dir: &Path, path: &str, text: &str) -> Result<(), TreeError> {
    let full = dir.join(path);
    if let Some(parent) = full.parent() {
        std::fs::create_dir_all(parent).map_err(|source| TreeError::Io {
            action: "create directory",
            path: parent.to_path_buf(),
            source,
        })?;
    }
    std::fs::write(&full, text).map_err(|source| TreeError::Io {
        action: "write",
        path: full.clone(),
        source,
    })?;
    Ok(())
}

/// Builds the shop as a git repository with the bug at the merge base and a fix with its
/// test at head, runs the gate with the reduce side, and describes the result.
fn gate_demo(temp: &Path, python: &str, interrupt: &Arc<AtomicBool>) -> Result<String, DemoError> {
    let repo = temp.join("shop-repo");
    write_project(&repo)?;
    // The old test of the project moves aside: the pull request's test is the one to prove.
    let config = format!(
        r#"{{"version":1,"tests":["tests/test_*.py"],"command":"{python} run_tests.py {{report}} {{tests}}","report":"junit"}}"#
    );
    write(&repo, ".github/repromin.json", &config)?;
    write(&repo, "run_tests.py", RUNNER)?;
    git(&repo, &["init", "-q", "-b", "main"])?;
    git(&repo, &["add", "-A"])?;
    git(
        &repo,
        &["commit", "-q", "-m", "the shop, with the coupon bug"],
    )?;
    let base = git(&repo, &["rev-parse", "HEAD"])?;
    write(&repo, "shop/cart.py", CART_FIXED)?;
    write(&repo, "tests/test_coupons.py", COUPON_TEST)?;
    git(&repo, &["add", "-A"])?;
    git(
        &repo,
        &["commit", "-q", "-m", "count each coupon once, with a test"],
    )?;
    let head = git(&repo, &["rev-parse", "HEAD"])?;
    let judgement = crate::gate::run(
        &crate::gate::RunInput {
            repo: repo.clone(),
            base: base.clone(),
            head: head.clone(),
            local_config: None,
            sandbox_user: None,
            container_cli: crate::container::ContainerCli::Docker,
            budget: std::time::Duration::from_secs(600),
            mutants_budget: std::time::Duration::from_secs(600),
            reduce: true,
            holdout_runs: crate::gate::certificate::HOLDOUT_RUNS,
            reports: None,
            regressions: false,
        },
        interrupt,
    );
    let mut out = String::new();
    let _ = writeln!(
        out,
        "merge base {base}: the bug; head {head}: the fix and tests/test_coupons.py"
    );
    let _ = writeln!(out, "{}", crate::gate::table(&judgement));
    if let Some(c) = &judgement.line.certificate {
        let _ = writeln!(out, "certificate: {}", c.verdict.as_str());
        if let (Some(t), Some(b), Some(a)) = (&c.test, &c.before, &c.after) {
            let _ = writeln!(
                out,
                "  {}::{} still fails on a tree of {} files, {} bytes (from {} files, {} bytes)",
                t.file, t.name, a.files, a.bytes, b.files, b.bytes
            );
        }
        if let Some(h) = &c.holdout {
            let _ = writeln!(
                out,
                "  holdout: {} of {} runs reproduced (at least {} needed), lower bound {}",
                h.passes, h.runs, h.required_passes, h.lower_bound
            );
        }
        if let Some(e) = &c.error {
            let _ = writeln!(out, "  {e}");
        }
    }
    let _ = writeln!(out, "\nthe line a bot reads:");
    let _ = write!(out, "{}", crate::gate::format(&judgement));
    Ok(out)
}
