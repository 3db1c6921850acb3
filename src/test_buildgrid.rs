//! A private BuildGrid for the remote-execution tests, shared by the unit tests and the
//! integration tests (tests/cli includes this file).
//!
//! It needs `REPROMIN_TEST_BGD` (the path of `bgd`) and `REPROMIN_TEST_POSTGRES` (a
//! SQLAlchemy URL without a database, `postgresql+psycopg2://USER:PASSWORD@HOST[:PORT]`,
//! of a role that may create databases); `.ci/run` sets both. Without them the test skips
//! (or fails under CI, see `test_skip.rs`). Each [`BuildGrid`] gets a database of its own
//! (made with `createdb`, its tables with `bgd migrate apply`), a free loopback port and a
//! temporary directory for its configuration and log; dropping it kills the server and
//! drops the database. A test process that is killed takes its server with it (the parent
//! death signal); the databases it left are dropped by the next start.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A running BuildGrid.
pub(crate) struct BuildGrid {
    /// Its endpoint, `http://127.0.0.1:PORT` (`https://` with TLS).
    pub(crate) url: String,
    /// With TLS, the PEM file of the certificate authority that signed its certificate.
    pub(crate) ca: Option<PathBuf>,
    bgd: String,
    server: Child,
    postgres: Postgres,
    database: String,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

/// Where PostgreSQL is and who to be there.
struct Postgres {
    url: String,
    user: String,
    password: String,
    host: String,
    port: String,
}

impl Postgres {
    fn parse(url: &str) -> Result<Postgres, String> {
        let url = url.trim_end_matches('/');
        let rest = url
            .split_once("://")
            .map(|(_, rest)| rest)
            .ok_or_else(|| format!("`{url}` is not a URL"))?;
        let (credentials, address) = rest
            .rsplit_once('@')
            .ok_or_else(|| format!("`{url}` names no user"))?;
        let (user, password) = credentials.split_once(':').unwrap_or((credentials, ""));
        let (host, port) = address.split_once(':').unwrap_or((address, "5432"));
        Ok(Postgres {
            url: url.to_string(),
            user: user.to_string(),
            password: password.to_string(),
            host: host.to_string(),
            port: port.to_string(),
        })
    }

    /// The tests' databases whose process is gone (`repromin_test_PID_N`, no `/proc/PID`).
    fn stale_databases(&self) -> Vec<String> {
        let out = Command::new("psql")
            .args([
                "-h", &self.host, "-p", &self.port, "-U", &self.user, "-d", "postgres",
            ])
            .args([
                "-tAc",
                "SELECT datname FROM pg_database WHERE datname LIKE 'repromin\\_test\\_%'",
            ])
            .env("PGPASSWORD", &self.password)
            .stdin(Stdio::null())
            .output();
        let Ok(out) = out else {
            return Vec::new();
        };
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|name| {
                let pid = name
                    .strip_prefix("repromin_test_")
                    .and_then(|rest| rest.split('_').next())
                    .and_then(|pid| pid.parse::<u32>().ok());
                pid.is_some_and(|pid| !std::path::Path::new(&format!("/proc/{pid}")).exists())
            })
            .map(str::to_string)
            .collect()
    }

    /// `createdb` or `dropdb` on `database`.
    fn tool(&self, tool: &str, extra: &[&str], database: &str) -> Result<(), String> {
        let out = Command::new(tool)
            .args(["-h", &self.host, "-p", &self.port, "-U", &self.user])
            .args(extra)
            .arg(database)
            .env("PGPASSWORD", &self.password)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run {tool}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{tool} {database} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }
}

/// Makes a certificate authority (`ca.pem`) and a server key and certificate it signs for
/// 127.0.0.1 and localhost, in `dir`, with `openssl`; returns the key and the certificate.
fn make_certificates(dir: &std::path::Path) -> (PathBuf, PathBuf) {
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .output()
            .expect("openssl runs");
        assert!(
            out.status.success(),
            "openssl {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let mut ca = vec!["req", "-x509"];
    ca.extend(ec);
    ca.extend(["-keyout", "ca.key", "-out", "ca.pem", "-days", "2"]);
    ca.extend(["-subj", "/CN=repromin test CA"]);
    openssl(&ca);
    let mut request = vec!["req"];
    request.extend(ec);
    request.extend(["-keyout", "server.key", "-out", "server.csr"]);
    request.extend(["-subj", "/CN=localhost"]);
    openssl(&request);
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n\
         keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
    )
    .expect("write the certificate's extensions");
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "2",
        "-extfile",
        "server.ext",
    ]);
    (dir.join("server.key"), dir.join("server.pem"))
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

const CONFIG: &str = r#"thread-pool-size: 64
server:
  - !channel
    address: "127.0.0.1:PORT"
CHANNEL
authorization:
  method: none
connections:
  - !sql-connection &sql
    connection-string: DATABASE
    pool-size: 5
    pool-timeout: 30
    max-overflow: 10
storages:
  - !lru-storage &main-storage
    size: 256MB
caches:
  - !lru-action-cache &main-action
    storage: *main-storage
    max-cached-refs: 10000
    allow-updates: true
    cache-failed-actions: true
schedulers:
  - !sql-scheduler &state-database
    sql: *sql
    action-cache: *main-action
    storage: *main-storage
    bot-session-keepalive-timeout: 10
    session-expiry-timer-interval: 1
    assigners:
      - !priority-age-assigner
        interval: 0.05
        jitter-factor: 0.02
instances:
  - name: ""
    services:
      - !action-cache
        cache: *main-action
      - !execution
        scheduler: *state-database
      - !cas
        storage: *main-storage
      - !bytestream
        storage: *main-storage
"#;

impl BuildGrid {
    /// Starts one, or returns `None` when this machine has none (the test then skips).
    ///
    /// # Panics
    /// A database that cannot be made, or a server that does not answer within 60 s (the
    /// message holds its log).
    pub(crate) fn start() -> Option<BuildGrid> {
        BuildGrid::start_with(false)
    }

    /// Starts one that speaks TLS only, with a certificate for 127.0.0.1 signed by a
    /// certificate authority made for it ([`BuildGrid::ca`]).
    #[allow(
        dead_code,
        reason = "the unit tests use it, the CLI tests and the harness do not"
    )]
    pub(crate) fn start_tls() -> Option<BuildGrid> {
        let openssl = Command::new("openssl")
            .arg("version")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run openssl: {e}"))
            .and_then(|out| {
                out.status
                    .success()
                    .then_some(())
                    .ok_or_else(|| "openssl version failed".to_string())
            });
        if !crate::test_skip::require_tool("openssl", openssl) {
            return None;
        }
        BuildGrid::start_with(true)
    }

    fn start_with(tls: bool) -> Option<BuildGrid> {
        let bgd = std::env::var("REPROMIN_TEST_BGD");
        let postgres = std::env::var("REPROMIN_TEST_POSTGRES");
        let (bgd, postgres) = match (bgd, postgres) {
            (Ok(bgd), Ok(postgres)) if !bgd.is_empty() && !postgres.is_empty() => (bgd, postgres),
            _ => {
                crate::test_skip::require_tool(
                    "BuildGrid",
                    Err("REPROMIN_TEST_BGD and REPROMIN_TEST_POSTGRES are not both set".into()),
                );
                return None;
            }
        };
        let postgres = Postgres::parse(&postgres).expect("REPROMIN_TEST_POSTGRES");
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let database = format!(
            "repromin_test_{}_{}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::Relaxed)
        );
        for stale in postgres.stale_databases() {
            let _ = postgres.tool("dropdb", &["--if-exists", "--force"], &stale);
        }
        let _ = postgres.tool("dropdb", &["--if-exists", "--force"], &database);
        postgres
            .tool("createdb", &[], &database)
            .expect("a fresh database for BuildGrid");
        let connection = format!("{}/{database}", postgres.url);
        let migrate = Command::new(&bgd)
            .args(["migrate", "apply", &connection])
            .stdin(Stdio::null())
            .output()
            .expect("bgd migrate apply runs");
        assert!(
            migrate.status.success(),
            "bgd migrate apply failed: {}",
            String::from_utf8_lossy(&migrate.stderr)
        );
        let dir = tempfile::tempdir().expect("a temp dir");
        let port = free_port();
        let config = dir.path().join("config.yml");
        let channel = if tls {
            let (key, cert) = make_certificates(dir.path());
            format!(
                "    insecure-mode: false\n    credentials:\n      tls-server-key: {}\n      tls-server-cert: {}\n",
                key.display(),
                cert.display()
            )
        } else {
            "    insecure-mode: true\n".to_string()
        };
        std::fs::write(
            &config,
            CONFIG
                .replace("CHANNEL", channel.trim_end_matches('\n'))
                .replace("PORT", &port.to_string())
                .replace("DATABASE", &connection),
        )
        .expect("write the BuildGrid config");
        let log = dir.path().join("server.log");
        let out = std::fs::File::create(&log).expect("create the server log");
        let err = out.try_clone().expect("clone the log handle");
        let mut command = Command::new(&bgd);
        command
            .args(["server", "start"])
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        // SAFETY: between fork and exec the closure only calls prctl, which allocates
        // nothing and takes no lock.
        #[expect(
            unsafe_code,
            reason = "pre_exec runs in the child between fork and exec"
        )]
        unsafe {
            use std::os::unix::process::CommandExt as _;
            command.pre_exec(|| {
                nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
                    .map_err(std::io::Error::from)
            });
        }
        let server = command.spawn().expect("bgd server start runs");
        let mut grid = BuildGrid {
            url: format!("{}://127.0.0.1:{port}", if tls { "https" } else { "http" }),
            ca: tls.then(|| dir.path().join("ca.pem")),
            bgd: bgd.clone(),
            server,
            postgres,
            database,
            log,
            _dir: dir,
        };
        grid.wait_ready();
        Some(grid)
    }

    /// The names of the operations not cancelled, read from the scheduler's database.
    pub(crate) fn operations(&self) -> Vec<String> {
        self.query("SELECT name FROM operations WHERE NOT cancelled")
    }

    /// The names of the operations neither cancelled nor completed.
    #[allow(dead_code, reason = "the CLI tests use it, the unit tests do not")]
    pub(crate) fn unfinished(&self) -> Vec<String> {
        self.query(
            "SELECT o.name FROM operations o JOIN jobs j ON o.job_name = j.name \
             WHERE NOT o.cancelled AND NOT j.cancelled AND j.stage < 4",
        )
    }

    /// The jobs the scheduler handed out more than once (their worker was lost, or it
    /// reported a status worth retrying).
    #[allow(dead_code, reason = "the CLI tests use it, the unit tests do not")]
    pub(crate) fn retried(&self) -> Vec<String> {
        self.query("SELECT name FROM jobs WHERE n_tries > 1")
    }

    /// The rows `sql` selects from the scheduler's database, one line each.
    fn query(&self, sql: &str) -> Vec<String> {
        let pg = &self.postgres;
        let out = Command::new("psql")
            .args([
                "-h",
                &pg.host,
                "-p",
                &pg.port,
                "-U",
                &pg.user,
                "-d",
                &self.database,
            ])
            .args(["-tAc", sql])
            .env("PGPASSWORD", &pg.password)
            .stdin(Stdio::null())
            .output()
            .expect("psql runs");
        assert!(
            out.status.success(),
            "psql failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// Cancels an operation with `bgd operation cancel`.
    pub(crate) fn cancel(&self, operation: &str) {
        let out = Command::new(&self.bgd)
            .args(["operation", "--remote", &self.url, "cancel", operation])
            .stdin(Stdio::null())
            .output()
            .expect("bgd operation cancel runs");
        assert!(
            out.status.success(),
            "bgd operation cancel failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The server's log so far.
    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn wait_ready(&mut self) {
        let bgd = self.bgd.clone();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let mut capabilities = Command::new(&bgd);
            capabilities.args(["capabilities", "--remote", &self.url]);
            if let Some(ca) = &self.ca {
                capabilities.arg("--server-cert").arg(ca);
            }
            let answered = capabilities
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if answered {
                return;
            }
            if let Ok(Some(status)) = self.server.try_wait() {
                panic!("BuildGrid exited ({status}); its log:\n{}", self.log());
            }
            if Instant::now() > deadline {
                panic!(
                    "BuildGrid did not answer GetCapabilities within 60 s; its log:\n{}",
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(300));
        }
    }
}

impl Drop for BuildGrid {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
        let _ = self
            .postgres
            .tool("dropdb", &["--if-exists", "--force"], &self.database);
    }
}
