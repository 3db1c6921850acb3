//! Fixture trees, written into temp dirs by the tests that use them.

/// A multi-file Python project whose script raises a named exception.
pub const PYTHON: &[(&str, &str)] = &[
    (
        "run.py",
        r#""""Parse the settings line and print it."""
from lib.parser import parse
from lib import extra

# The third item has no '=': that is the bug.
settings = parse("alpha=1;beta=2;gamma")
print(extra.describe(settings))
"#,
    ),
    ("lib/__init__.py", "\"\"\"Library.\"\"\"\n"),
    (
        "lib/parser.py",
        r#""""A settings parser."""


class ParseError(Exception):
    """Raised on malformed input."""


def split_items(text):
    return [item for item in text.split(";") if item]


def parse(text):
    result = {}
    for index, item in enumerate(split_items(text)):
        if "=" not in item:
            raise ParseError(f"missing '=' in item {index}: {item!r}")
        key, value = item.split("=", 1)
        result[key.strip()] = value.strip()
    return result


def dump(settings):
    return ";".join(f"{k}={v}" for k, v in sorted(settings.items()))
"#,
    ),
    (
        "lib/extra.py",
        r#""""Formatting helpers."""


def describe(settings):
    return ", ".join(sorted(settings))


def shout(text):
    return text.upper() + "!"
"#,
    ),
    (
        "lib/util.py",
        "def clamp(x, lo, hi):\n    return max(lo, min(hi, x))\n\n\ndef unused():\n    return 42\n",
    ),
    (
        "docs/notes.md",
        "# Notes\n\nThe parser accepts `key=value` items separated by `;`.\n\nEmpty items are skipped.\n",
    ),
    (
        "data/sample.txt",
        "alpha=1;beta=2\nalpha=3;beta=4\nalpha=5;beta=6\nalpha=7;beta=8\n",
    ),
];

/// The line the Python fixture's failure ends with.
pub const PYTHON_ERROR: &str = "lib.parser.ParseError: missing '=' in item 2: 'gamma'";

/// A small C tree that compiles and runs, failing at run time.
pub const C_TREE: &[(&str, &str)] = &[
    (
        "src/main.c",
        r#"#include <stdio.h>
#include "sum.h"
#include "fmt.h"

int main(void) {
    int values[4] = {3, 4, 5, 1};
    int total = sum(values, 4);
    if (total != 13) {
        fprintf(stderr, "fatal: checksum mismatch: got %d want %d\n", total, 13);
        return 2;
    }
    print_total(total);
    return 0;
}
"#,
    ),
    (
        "src/sum.h",
        "#ifndef SUM_H\n#define SUM_H\nint sum(const int *values, int n);\nint product(const int *values, int n);\n#endif\n",
    ),
    (
        "src/sum.c",
        r#"#include "sum.h"

/* Off by one: the last value is never added. */
int sum(const int *values, int n) {
    int total = 0;
    for (int i = 0; i < n - 1; i++) {
        total += values[i];
    }
    return total;
}

int product(const int *values, int n) {
    int total = 1;
    for (int i = 0; i < n; i++) {
        total *= values[i];
    }
    return total;
}
"#,
    ),
    (
        "src/fmt.h",
        "#ifndef FMT_H\n#define FMT_H\nvoid print_total(int total);\n#endif\n",
    ),
    (
        "src/fmt.c",
        "#include <stdio.h>\n#include \"fmt.h\"\n\nvoid print_total(int total) {\n    printf(\"total: %d\\n\", total);\n}\n",
    ),
    ("README", "A tiny C program.\n"),
];

/// The command for the C tree: build into TMPDIR, then run.
pub const C_COMMAND: &str = "gcc -o \"$TMPDIR/prog\" src/*.c && \"$TMPDIR/prog\"";
