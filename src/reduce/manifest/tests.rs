//! Fixtures and checks shared by the manifest readers' tests, and the tests that hold for every
//! kind: each candidate leaves a parsable file, a byte-order mark is kept, malformed or truncated
//! files never panic, and kinds are detected by file name.

use std::ops::Range;

use super::check;
use super::*;

pub(super) const CARGO: &str = r#"# Demo crate
[package]
name = "demo"
version = "0.1.0"
edition = "2021"
description = "A demo" # shown on crates.io

[dependencies]
# Serialization
serde = { version = "1", features = ["derive", "rc"] }
anyhow = "1"
tokio = { version = "1.0", default-features = false, features = [
    "rt",
    "macros",
] }

[dev-dependencies]
proptest = "1"

[features]
default = ["std"]
std = []

[[bin]]
name = "demo"
path = "src/main.rs"
"#;

pub(super) const PYPROJECT: &str = r#"[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "demo"
version = "0.1.0"
dependencies = [
    "requests>=2.28",  # HTTP
    "click",
    "rich; python_version >= '3.8'",
]

[project.optional-dependencies]
test = ["pytest", "pytest-cov"]

[tool.pytest.ini_options]
addopts = "-ra"
testpaths = ["tests"]
"#;

pub(super) const PIPFILE: &str = r#"[[source]]
url = "https://pypi.org/simple"
verify_ssl = true
name = "pypi"

[packages]
requests = "*"
flask = {version = ">=2.0", extras = ["async"]}

[dev-packages]
pytest = "*"

[requires]
python_version = "3.11"
"#;

pub(super) const PACKAGE_JSON: &str = r#"{
  "name": "demo",
  "version": "1.0.0",
  "private": true,
  "scripts": {
    "build": "tsc",
    "test": "jest"
  },
  "files": [
    "dist",
    "lib",
    "README.md"
  ],
  "dependencies": {
    "lodash": "^4.17.21",
    "react": "^18.2.0"
  },
  "devDependencies": {
    "jest": "^29.0.0"
  },
  "workspaces": ["packages/*", "apps/*"]
}
"#;

pub(super) const COMPOSER_JSON: &str = r#"{
    "name": "acme/demo",
    "type": "library",
    "require": {
        "php": ">=8.1",
        "monolog/monolog": "^3.0"
    },
    "require-dev": {
        "phpunit/phpunit": "^10.0"
    },
    "autoload": {
        "psr-4": {
            "Acme\\Demo\\": "src/"
        },
        "files": ["src/helpers.php"]
    }
}
"#;

pub(super) const GO_MOD: &str = "module example.com/demo

go 1.21

toolchain go1.21.5

require (
\tgithub.com/pkg/errors v0.9.1
\t// logging
\tgolang.org/x/text v0.14.0 // indirect
)

require github.com/stretchr/testify v1.8.4

// Use the local fork.
replace example.com/old => ../old

exclude (
\texample.com/bad v1.0.0
)
";

pub(super) const GO_WORK: &str = "go 1.22

use (
\t./api
\t./cmd/tool
)

use ./lib

replace example.com/x v1.0.0 => ./x
";

pub(super) const POM: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId>
  <artifactId>demo</artifactId>
  <version>1.0</version>
  <modules>
    <module>core</module>
  </modules>
  <dependencies>
    <!-- JSON support -->
    <dependency>
      <groupId>com.google.code.gson</groupId>
      <artifactId>gson</artifactId>
      <version>2.10.1</version>
    </dependency>
    <dependency>
      <groupId>org.slf4j</groupId>
      <artifactId>slf4j-api</artifactId>
      <version>2.0.9</version>
    </dependency>
    <dependency>
      <groupId>junit</groupId>
      <artifactId>junit</artifactId>
      <version>4.13.2</version>
      <scope>test</scope>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-compiler-plugin</artifactId>
        <version>3.11.0</version>
        <configuration><release>17</release></configuration>
      </plugin>
    </plugins>
  </build>
  <profiles>
    <profile>
      <id>ci</id>
      <dependencies>
        <dependency><groupId>a</groupId><artifactId>b</artifactId></dependency>
      </dependencies>
    </profile>
  </profiles>
</project>
"#;

pub(super) const CSPROJ: &str = r#"<Project Sdk="Microsoft.NET.Sdk">

  <PropertyGroup>
    <OutputType>Exe</OutputType>
    <TargetFramework>net8.0</TargetFramework>
  </PropertyGroup>

  <ItemGroup>
    <PackageReference Include="Newtonsoft.Json" Version="13.0.3" />
    <PackageReference Include="Serilog" Version="3.1.1" />
    <PackageReference Include="xunit">
      <Version>2.6.2</Version>
    </PackageReference>
  </ItemGroup>

  <ItemGroup Condition="'$(Configuration)' == 'Debug'">
    <ProjectReference Include="..\Lib\Lib.csproj" />
    <Compile Remove="Legacy\**" />
    <None Include="appsettings.json" CopyToOutputDirectory="Always" />
    <Content Include="wwwroot\**" />
  </ItemGroup>

</Project>
"#;

pub(super) const REQUIREMENTS: &str = r#"# Core
requests>=2.28 \
    --hash=sha256:abc \
    --hash=sha256:def
-r other.txt
--requirement=base.txt
-c constraints.txt
--index-url https://pypi.org/simple

flask==2.3.0  # web
numpy; python_version >= "3.9"
"#;

pub(super) const GEMFILE: &str = r#"source "https://rubygems.org"
git_source(:github) { |repo| "https://github.com/#{repo}.git" }

ruby "3.2.2"

# Rails itself
gem "rails", "~> 7.1"
gem "pg", ">= 1.1"
gem "puma", require: false if ENV["PUMA"]
gem 'bootsnap',
  require: false

group :development, :test do
  gem "rspec-rails"
  gem "debug", platforms: %i[mri windows]
end

group :development do
  gem "web-console"
  if RUBY_VERSION >= "3.0"
    gem "rubocop", require: false
  end
end

gemspec
"#;

pub(super) fn fixtures() -> Vec<(ManifestKind, &'static str)> {
    vec![
        (ManifestKind::CargoToml, CARGO),
        (ManifestKind::PyprojectToml, PYPROJECT),
        (ManifestKind::Pipfile, PIPFILE),
        (ManifestKind::Requirements, REQUIREMENTS),
        (ManifestKind::PackageJson, PACKAGE_JSON),
        (ManifestKind::ComposerJson, COMPOSER_JSON),
        (ManifestKind::GoMod, GO_MOD),
        (ManifestKind::GoWork, GO_WORK),
        (ManifestKind::PomXml, POM),
        (ManifestKind::MsBuild, CSPROJ),
        (ManifestKind::Gemfile, GEMFILE),
    ]
}

pub(super) fn levels_of(kind: ManifestKind, src: &str) -> Vec<Vec<ManifestEdit>> {
    candidates(kind, src.as_bytes()).expect("fixture parses")
}

pub(super) fn find<'a>(levels: &'a [Vec<ManifestEdit>], label: &str) -> &'a ManifestEdit {
    levels
        .iter()
        .flatten()
        .find(|e| e.label == label)
        .unwrap_or_else(|| panic!("no candidate `{label}` in {:#?}", labels(levels)))
}

pub(super) fn labels(levels: &[Vec<ManifestEdit>]) -> Vec<Vec<String>> {
    levels
        .iter()
        .map(|l| l.iter().map(|e| e.label.clone()).collect())
        .collect()
}

pub(super) fn applied(src: &str, edit: &ManifestEdit) -> String {
    String::from_utf8(edit.apply(src.as_bytes())).expect("still UTF-8")
}

/// Parses `text` with the kind's own parser (the real one where there is one).
pub(super) fn reparses(
    kind: ManifestKind,
    original: &str,
    text: &str,
) -> Result<(), check::Violation> {
    check::reparses(kind, original, text)
}

/// A line of a block whose first word is `go` is an entry of that block, not the go
/// directive: deleting the block loses no directive (a fuzz finding, in the checker).
#[test]
fn an_entry_named_go_inside_a_block_is_not_the_go_directive() {
    let original = "module x\nreplace (\n\tgo 1.21\n)\n";
    assert_eq!(
        reparses(ManifestKind::GoMod, original, "module x\n"),
        Ok(())
    );
    let with_go = "module x\ngo 1.21\n";
    assert_eq!(
        reparses(ManifestKind::GoMod, with_go, "module x\n"),
        Err(check::Violation("go directive lost".to_string()))
    );
}

/// Structural checks that hold for every result.
pub(super) fn check_shape(src: &str, levels: &[Vec<ManifestEdit>]) {
    if let Err(e) = check::shape(src, levels) {
        panic!("{e}");
    }
}

pub(super) fn check_all(kind: ManifestKind, src: &str) {
    let levels = levels_of(kind, src);
    assert!(!levels.is_empty(), "{kind:?} gives candidates");
    check_shape(src, &levels);
    check_each_applies(kind, src, &levels);
    if let Err(e) = check::runs_apply(kind, src, &levels) {
        panic!("{e}");
    }
}

/// Applying any single candidate leaves a file that still parses as its kind.
pub(super) fn check_each_applies(kind: ManifestKind, src: &str, levels: &[Vec<ManifestEdit>]) {
    if let Err(e) = check::each_applies(kind, src, levels) {
        panic!("{e}");
    }
}

#[test]
fn every_candidate_of_every_fixture_leaves_a_parsable_file() {
    for (kind, src) in fixtures() {
        check_all(kind, src);
    }
}

/// The last item of a list, after a comment that ends the previous item's line, shares
/// only the comma with the previous item's deletion, and each still leaves a valid file.
#[test]
fn a_comment_between_the_last_two_items_is_not_shared() {
    let src = "[project]\nname = \"d\"\ndeps = [\n    \"a\",  # c\n    \"b\"]\n";
    check_all(ManifestKind::PyprojectToml, src);
    let json = "{\"name\": \"d\", \"files\": [\n  \"a\",\n  \"b\"]}";
    check_all(ManifestKind::PackageJson, json);
}

#[test]
fn byte_order_mark_is_kept_and_ranges_shifted() {
    for (kind, src) in fixtures() {
        let with_bom = format!("\u{feff}{src}");
        let plain = levels_of(kind, src);
        let shifted = levels_of(kind, &with_bom);
        assert_eq!(labels(&plain), labels(&shifted), "{kind:?}");
        for (a, b) in plain.iter().flatten().zip(shifted.iter().flatten()) {
            let moved: Vec<Range<usize>> =
                a.delete.iter().map(|r| r.start + 3..r.end + 3).collect();
            assert_eq!(moved, b.delete, "{kind:?} {}", a.label);
            assert!(applied(&with_bom, b).starts_with('\u{feff}'));
        }
        check_all(kind, &with_bom);
    }
}

#[test]
fn no_candidate_applied_leaves_bytes_unchanged() {
    for (kind, src) in fixtures() {
        let none = ManifestEdit {
            label: String::new(),
            delete: Vec::new(),
            slot: None,
        };
        assert_eq!(none.apply(src.as_bytes()), src.as_bytes());
        // Computing candidates is pure and repeatable.
        assert_eq!(levels_of(kind, src), levels_of(kind, src));
        reparses(kind, src, src).expect("fixture parses");
    }
}

#[test]
fn malformed_files_give_errors() {
    let bad: &[(ManifestKind, &str)] = &[
        (ManifestKind::CargoToml, "[package\nname = \"x\"\n"),
        (ManifestKind::CargoToml, "a = 1\na = 2\n"),
        (ManifestKind::PyprojectToml, "[project]\nname = \n"),
        (ManifestKind::Pipfile, "[packages]\nrequests = *\n"),
        (ManifestKind::PackageJson, "{\"name\": \"x\",}"),
        (ManifestKind::PackageJson, "{\"name\": \"x\" // c\n}"),
        (ManifestKind::PackageJson, "{'name': 'x'}"),
        (ManifestKind::PackageJson, "{\"a\": \"tab\there\"}"),
        (ManifestKind::PackageJson, "[1, 2]"),
        (ManifestKind::ComposerJson, ""),
        (ManifestKind::GoMod, "module x\nrequire (\n\ta v1\n"),
        (ManifestKind::GoMod, "module x\nrequire (\n\ta v1\n) x\n"),
        (ManifestKind::GoMod, "module x\n)\n"),
        (ManifestKind::GoMod, "module \"x\n"),
        (ManifestKind::GoMod, "module x\nrequire ( a v1 )\n"),
        (ManifestKind::GoWork, "\"go\" 1.22\n"),
        (ManifestKind::GoMod, "module x /* c */\n"),
        (ManifestKind::GoMod, "module x\nreplace a => \"b\\\n\"\n"),
    ];
    for (kind, src) in bad {
        let result = candidates(*kind, src.as_bytes());
        assert!(result.is_err(), "{kind:?} accepted {src:?}: {result:?}");
    }
    for (kind, _) in fixtures() {
        assert!(matches!(
            candidates(kind, b"name = \"\xff\xfe\"\n"),
            Err(ManifestError::NotUtf8 { offset: 8, .. })
        ));
    }
    let err = candidates(ManifestKind::PackageJson, b"[1]").unwrap_err();
    assert!(matches!(err, ManifestError::Shape { .. }), "{err}");
}

#[test]
fn truncated_and_mutated_files_never_panic() {
    for (kind, src) in fixtures() {
        let positions: Vec<usize> = (0..=src.len())
            .filter(|&i| src.is_char_boundary(i))
            .collect();
        for &cut in &positions {
            let prefix = &src[..cut];
            if let Ok(levels) = candidates(kind, prefix.as_bytes()) {
                check_shape(prefix, &levels);
                if cut % 7 == 0 {
                    check_each_applies(kind, prefix, &levels);
                }
            }
        }
        for (n, &at) in positions.iter().enumerate().step_by(2) {
            for replacement in ["\"", "\n", "{", "]", "#", ",", "<", "\\", "(", ")", "é"] {
                if at >= src.len() || n % 3 != 0 {
                    continue;
                }
                let next = src[at..].chars().next().map_or(0, char::len_utf8);
                let mutated = format!("{}{replacement}{}", &src[..at], &src[at + next..]);
                if let Ok(levels) = candidates(kind, mutated.as_bytes()) {
                    check_shape(&mutated, &levels);
                    if n % 21 == 0 {
                        check_each_applies(kind, &mutated, &levels);
                    }
                }
            }
        }
    }
}

#[test]
fn kinds_by_file_name() {
    let cases: &[(&str, Option<ManifestKind>)] = &[
        ("Cargo.toml", Some(ManifestKind::CargoToml)),
        ("crates/x/Cargo.toml", Some(ManifestKind::CargoToml)),
        ("pyproject.toml", Some(ManifestKind::PyprojectToml)),
        ("Pipfile", Some(ManifestKind::Pipfile)),
        ("Pipfile.lock", None),
        ("requirements.txt", Some(ManifestKind::Requirements)),
        ("requirements-dev.txt", Some(ManifestKind::Requirements)),
        ("dev-requirements.in", Some(ManifestKind::Requirements)),
        ("requirements.in", Some(ManifestKind::Requirements)),
        ("requirements/base.txt", Some(ManifestKind::Requirements)),
        ("requirements/dev.in", Some(ManifestKind::Requirements)),
        ("constraints.txt", Some(ManifestKind::Requirements)),
        ("Makefile.in", None),
        ("MANIFEST.in", None),
        ("notes.txt", None),
        ("web/package.json", Some(ManifestKind::PackageJson)),
        ("composer.json", Some(ManifestKind::ComposerJson)),
        ("go.mod", Some(ManifestKind::GoMod)),
        ("go.work", Some(ManifestKind::GoWork)),
        ("go.sum", None),
        ("pom.xml", Some(ManifestKind::PomXml)),
        ("src\\App\\App.csproj", Some(ManifestKind::MsBuild)),
        ("Lib.fsproj", Some(ManifestKind::MsBuild)),
        ("Old.VBPROJ", Some(ManifestKind::MsBuild)),
        ("Directory.Build.props", Some(ManifestKind::MsBuild)),
        ("build/Custom.targets", Some(ManifestKind::MsBuild)),
        ("Gemfile", Some(ManifestKind::Gemfile)),
        ("Gemfile.lock", None),
        ("cargo.toml", None),
        ("", None),
    ];
    for (path, kind) in cases {
        assert_eq!(manifest_kind(path), *kind, "{path}");
    }
}
