//! Integration tests of the repromin command: real trees in temp dirs, real commands.

mod args;
mod certificate;
mod ci;
mod completions;
mod config;
mod containers;
mod crash;
mod doctor;
mod errors;
mod faults;
mod feedback;
mod fixtures;
mod flaky;
mod frames;
mod gate;
mod hang_certificate;
mod harness;
mod help;
mod kills;
mod layering;
mod levels;
mod limits;
mod links;
mod man;
mod memory;
mod mutants;
mod package;
mod progress;
mod publish;
mod reduce;
mod regressions;
mod remote;
mod remote_reduce;
mod remote_workers;
mod runs;
mod sampling;
mod sandbox;
mod schemas;
mod semantic;
mod session;
mod single_file;
mod snapshots;
mod speed;
// The private BuildGrid the remote-execution tests start, shared with the unit tests
// (which use more of it).
#[allow(dead_code)]
#[path = "../../src/test_buildgrid.rs"]
mod test_buildgrid;
// The skip helpers the unit tests use too; the integration tests need no `require_root`.
#[allow(dead_code)]
#[path = "../../src/test_skip.rs"]
mod test_skip;
mod util;
mod workspaces;
mod zero_config;
