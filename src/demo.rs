//! `repromin demo`: a small project with a real bug, reduced end to end.
//!
//! The project is a little Python shop: a catalog, a cart, coupons, a report, docs and
//! tests. Its bug is real: a coupon can be applied twice, which drives the total negative and
//! makes `main.py` raise. The demo writes the project into a temporary directory, reduces it
//! with the default same-failure oracle and prints what was removed and the figures.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::cli::{Exit, exit_for, render_error};
use crate::console::Console;
use crate::reduce::{ReduceError, ReduceOptions};
use crate::tree::{Node, TreeError};

/// The demo project, as (path, contents).
pub const PROJECT: &[(&str, &str)] = &[
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
pub fn write_project(dir: &Path) -> Result<(), TreeError> {
    for (path, text) in PROJECT {
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
    }
    Ok(())
}

fn python() -> String {
    for candidate in ["python3", "python"] {
        let found = std::process::Command::new(candidate)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if found {
            return candidate.to_string();
        }
    }
    "python3".to_string()
}

fn demo(console: &Console, interrupt: &Arc<AtomicBool>) -> Result<String, ReduceError> {
    let temp = tempfile::Builder::new()
        .prefix("repromin-demo-")
        .tempdir()
        .map_err(|source| TreeError::Io {
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
            crate::reduce::edits::Edit::DeleteBytes { .. } => None,
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
    let _ = write!(
        out,
        "\nthe full report (report.json, REPROMIN.md) was written beside the result and removed with the demo directory"
    );
    Ok(out)
}

/// Runs the demo and prints its story.
pub fn run(console: &Console, interrupt: &Arc<AtomicBool>) -> Exit {
    match demo(console, interrupt) {
        Ok(text) => {
            console.out(&text);
            Exit::Ok
        }
        Err(err) => {
            render_error(console, &err);
            exit_for(&err)
        }
    }
}
