//! A connection to a cluster: a current-thread tokio runtime, a gRPC channel, the instance
//! name and the batch size the server allows, made after GetCapabilities says SHA-256
//! digests and execution are there.

use std::sync::Arc;
use std::time::Duration;

use bazel_remote_apis::build::bazel::remote::execution::v2 as re;
use tonic::Status;
use tonic::metadata::{Ascii, MetadataKey, MetadataValue};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, ClientTlsConfig};

use super::error::RemoteError;

/// gRPC's DEADLINE_EXCEEDED.
pub(super) const DEADLINE_EXCEEDED: i32 = 4;

/// gRPC's RESOURCE_EXHAUSTED.
pub(super) const RESOURCE_EXHAUSTED: i32 = 8;

/// gRPC's FAILED_PRECONDITION.
pub(super) const FAILED_PRECONDITION: i32 = 9;

/// Where the cluster is and how to talk to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteConfig {
    /// The endpoint: `grpc://HOST:PORT` or `http://HOST:PORT` for plain HTTP/2,
    /// `grpcs://HOST:PORT` or `https://HOST:PORT` for TLS.
    pub url: String,
    /// The instance name; empty for the default instance.
    pub instance: String,
    /// With TLS, a PEM file of the certificate authorities to trust in place of the
    /// system's (a cluster with a certificate of its own).
    pub tls_ca: Option<std::path::PathBuf>,
    /// Metadata sent with every call, such as a hosted service's API key
    /// (`x-buildbuddy-api-key`) or `authorization: Bearer TOKEN`.
    pub headers: Vec<(String, String)>,
    /// How long a run may take beyond its own timeout (waiting for a worker, a worker
    /// lost and its action handed out again) before it is cancelled as an error.
    pub wait: Duration,
}

impl RemoteConfig {
    /// The default [`RemoteConfig::wait`]: 15 minutes.
    pub const DEFAULT_WAIT: Duration = Duration::from_secs(900);

    /// `url` and `instance` with the default wait.
    #[must_use]
    pub fn new(url: &str, instance: &str) -> RemoteConfig {
        RemoteConfig {
            url: url.to_string(),
            instance: instance.to_string(),
            tls_ca: None,
            headers: Vec::new(),
            wait: RemoteConfig::DEFAULT_WAIT,
        }
    }

    /// Whether the endpoint speaks TLS (`grpcs://` or `https://`).
    #[must_use]
    pub fn is_tls(&self) -> bool {
        self.url.starts_with("grpcs://") || self.url.starts_with("https://")
    }
}

/// The channel every client uses: the connection with the configured metadata added to
/// each call.
pub(super) type Channel = InterceptedService<tonic::transport::Channel, Headers>;

/// Adds the configured metadata to each call.
#[derive(Clone)]
pub(super) struct Headers(Arc<Vec<(MetadataKey<Ascii>, MetadataValue<Ascii>)>>);

impl Headers {
    fn parse(pairs: &[(String, String)]) -> Result<Headers, RemoteError> {
        let mut parsed = Vec::new();
        for (name, value) in pairs {
            let bad = |why: &str| RemoteError::BadHeader {
                name: name.clone(),
                reason: why.to_string(),
            };
            if name.to_ascii_lowercase().ends_with("-bin") {
                return Err(bad("binary (`-bin`) headers are not supported"));
            }
            let key = MetadataKey::<Ascii>::from_bytes(name.to_ascii_lowercase().as_bytes())
                .map_err(|_| bad("not a header name (letters, digits, `-`, `_`, `.`)"))?;
            let value = MetadataValue::<Ascii>::try_from(value.as_str())
                .map_err(|_| bad("its value holds a character a header cannot carry"))?;
            parsed.push((key, value));
        }
        Ok(Headers(Arc::new(parsed)))
    }
}

impl tonic::service::Interceptor for Headers {
    fn call(&mut self, mut request: tonic::Request<()>) -> Result<tonic::Request<()>, Status> {
        for (key, value) in self.0.iter() {
            request.metadata_mut().insert(key.clone(), value.clone());
        }
        Ok(request)
    }
}

/// A connection: the runtime, the channel, the instance and the batch size.
pub(super) struct Conn {
    pub(super) runtime: tokio::runtime::Runtime,
    pub(super) channel: Channel,
    pub(super) instance: String,
    /// The most bytes of blobs one batch call carries.
    pub(super) batch_limit: usize,
    /// [`RemoteConfig::wait`].
    pub(super) wait: Duration,
}

/// The most a batch call carries, whatever the server allows: gRPC servers refuse messages
/// over 4 MiB unless told otherwise; the margin covers the digests and the framing.
const BATCH_CEILING: usize = 4 * 1024 * 1024 - 64 * 1024;

impl Conn {
    /// Connects to `config` and checks its capabilities.
    pub(super) fn open(config: &RemoteConfig) -> Result<Conn, RemoteError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(RemoteError::Runtime)?;
        let headers = Headers::parse(&config.headers)?;
        // Bazel's spellings: `grpc://HOST:PORT` is HTTP/2 without TLS, `grpcs://` with it.
        let uri = if let Some(rest) = config.url.strip_prefix("grpc://") {
            format!("http://{rest}")
        } else if let Some(rest) = config.url.strip_prefix("grpcs://") {
            format!("https://{rest}")
        } else {
            config.url.clone()
        };
        let bad_url = |source| RemoteError::BadUrl {
            url: config.url.clone(),
            source,
        };
        let mut endpoint = tonic::transport::Endpoint::from_shared(uri)
            .map_err(bad_url)?
            .connect_timeout(Duration::from_secs(10));
        if config.is_tls() {
            let trust = match &config.tls_ca {
                Some(path) => {
                    let pem = std::fs::read(path).map_err(|source| RemoteError::Ca {
                        path: path.clone(),
                        source,
                    })?;
                    ClientTlsConfig::new().ca_certificate(Certificate::from_pem(pem))
                }
                None => ClientTlsConfig::new().with_native_roots(),
            };
            endpoint = endpoint.tls_config(trust).map_err(bad_url)?;
        }
        let channel =
            runtime
                .block_on(endpoint.connect())
                .map_err(|source| RemoteError::Connect {
                    url: config.url.clone(),
                    source,
                })?;
        let channel = InterceptedService::new(channel, headers);
        let mut capabilities = re::capabilities_client::CapabilitiesClient::new(channel.clone());
        let caps = runtime
            .block_on(capabilities.get_capabilities(re::GetCapabilitiesRequest {
                instance_name: config.instance.clone(),
            }))
            .map_err(|source| RemoteError::Rpc {
                call: "GetCapabilities",
                source,
            })?
            .into_inner();
        let unsupported = |reason: &str| RemoteError::Unsupported {
            url: config.url.clone(),
            reason: reason.to_string(),
        };
        let sha256 = re::digest_function::Value::Sha256 as i32;
        let cache = caps
            .cache_capabilities
            .ok_or_else(|| unsupported("it has no content-addressable storage"))?;
        if !cache.digest_functions.contains(&sha256) {
            return Err(unsupported("its storage does not offer SHA-256 digests"));
        }
        let exec = caps
            .execution_capabilities
            .ok_or_else(|| unsupported("it does not execute actions"))?;
        if !exec.exec_enabled {
            return Err(unsupported("execution is disabled"));
        }
        if exec.digest_function != sha256 && !exec.digest_functions.contains(&sha256) {
            return Err(unsupported("its execution does not offer SHA-256 digests"));
        }
        let offered = usize::try_from(cache.max_batch_total_size_bytes).unwrap_or(0);
        let batch_limit = if offered == 0 {
            BATCH_CEILING
        } else {
            offered.saturating_sub(64 * 1024).clamp(1, BATCH_CEILING)
        };
        Ok(Conn {
            runtime,
            channel,
            instance: config.instance.clone(),
            batch_limit,
            wait: config.wait,
        })
    }
}

/// The `Any` type URL of a message of REAPI v2.
pub(super) fn type_url(name: &str) -> String {
    format!("type.googleapis.com/build.bazel.remote.execution.v2.{name}")
}

#[cfg(test)]
mod tests {
    use tonic::service::Interceptor as _;

    use super::*;

    #[test]
    fn every_call_carries_the_configured_headers() {
        let mut headers = Headers::parse(&[
            ("X-Api-Key".into(), "a key".into()),
            ("authorization".into(), "Bearer t".into()),
        ])
        .expect("valid headers");
        let request = headers.call(tonic::Request::new(())).expect("added");
        let metadata = request.metadata();
        assert_eq!(
            metadata.get("x-api-key").map(|v| v.to_str().ok()),
            Some(Some("a key"))
        );
        assert_eq!(
            metadata.get("authorization").map(|v| v.to_str().ok()),
            Some(Some("Bearer t"))
        );
    }

    #[test]
    fn an_endpoint_speaks_tls_by_its_scheme() {
        for (url, tls) in [
            ("grpc://h:1", false),
            ("http://h:1", false),
            ("grpcs://h:1", true),
            ("https://h:1", true),
        ] {
            assert_eq!(RemoteConfig::new(url, "").is_tls(), tls, "{url}");
        }
    }
}
