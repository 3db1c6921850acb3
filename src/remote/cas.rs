//! The content-addressable storage: which blobs are missing, uploads (batches, and
//! ByteStream writes for blobs too big for one), downloads (batches, and ByteStream reads).

use std::collections::{HashMap, HashSet};

use bazel_remote_apis::build::bazel::remote::execution::v2 as re;
use bazel_remote_apis::google::bytestream;
use re::content_addressable_storage_client::ContentAddressableStorageClient;

use super::error::RemoteError;

/// The bytes of one ByteStream write request.
const CHUNK: usize = 1024 * 1024;

/// The most digests one FindMissingBlobs call asks about.
const FIND_BATCH: usize = 10_000;

/// Room a batch request leaves for each blob's digest and framing.
const PER_BLOB: usize = 128;

/// The storage of one instance over one channel.
pub(super) struct Cas<'a> {
    pub(super) channel: super::conn::Channel,
    pub(super) instance: &'a str,
    pub(super) batch_limit: usize,
}

/// The key of a blob: its hash and size.
pub(super) type Key = (String, i64);

pub(super) fn key(digest: &re::Digest) -> Key {
    (digest.hash.clone(), digest.size_bytes)
}

fn size_of(digest: &re::Digest) -> usize {
    usize::try_from(digest.size_bytes).unwrap_or(usize::MAX)
}

fn rpc(call: &'static str) -> impl FnOnce(tonic::Status) -> RemoteError {
    move |source| RemoteError::Rpc { call, source }
}

impl Cas<'_> {
    fn client(&self) -> ContentAddressableStorageClient<super::conn::Channel> {
        ContentAddressableStorageClient::new(self.channel.clone())
            .max_decoding_message_size(usize::MAX)
    }

    /// The resource name of a blob: `{instance}/{middle}blobs/{hash}/{size}`, without the
    /// instance part when it is empty.
    fn resource(&self, middle: &str, digest: &re::Digest) -> String {
        let tail = format!("{middle}blobs/{}/{}", digest.hash, digest.size_bytes);
        if self.instance.is_empty() {
            tail
        } else {
            format!("{}/{tail}", self.instance)
        }
    }

    /// Which of `digests` the storage lacks.
    pub(super) async fn missing(
        &self,
        digests: &[re::Digest],
    ) -> Result<HashSet<Key>, RemoteError> {
        let mut missing = HashSet::new();
        let mut client = self.client();
        for part in digests.chunks(FIND_BATCH) {
            let answer = client
                .find_missing_blobs(re::FindMissingBlobsRequest {
                    instance_name: self.instance.to_string(),
                    blob_digests: part.to_vec(),
                    ..Default::default()
                })
                .await
                .map_err(rpc("FindMissingBlobs"))?
                .into_inner();
            missing.extend(answer.missing_blob_digests.iter().map(key));
        }
        Ok(missing)
    }

    /// Stores those of `blobs` the storage lacks.
    pub(super) async fn upload(&self, blobs: &[(re::Digest, &[u8])]) -> Result<(), RemoteError> {
        let digests: Vec<re::Digest> = blobs.iter().map(|(d, _)| d.clone()).collect();
        let missing = self.missing(&digests).await?;
        let mut seen = HashSet::new();
        let mut batch: Vec<re::batch_update_blobs_request::Request> = Vec::new();
        let mut batch_bytes = 0;
        for (digest, data) in blobs {
            let k = key(digest);
            if !missing.contains(&k) || !seen.insert(k) {
                continue;
            }
            if data.len() + PER_BLOB > self.batch_limit {
                self.write(digest, data).await?;
                continue;
            }
            if batch_bytes + data.len() + PER_BLOB > self.batch_limit {
                self.send_batch(std::mem::take(&mut batch)).await?;
                batch_bytes = 0;
            }
            batch_bytes += data.len() + PER_BLOB;
            batch.push(re::batch_update_blobs_request::Request {
                digest: Some(digest.clone()),
                data: data.to_vec(),
                ..Default::default()
            });
        }
        if !batch.is_empty() {
            self.send_batch(batch).await?;
        }
        Ok(())
    }

    async fn send_batch(
        &self,
        requests: Vec<re::batch_update_blobs_request::Request>,
    ) -> Result<(), RemoteError> {
        let answer = self
            .client()
            .batch_update_blobs(re::BatchUpdateBlobsRequest {
                instance_name: self.instance.to_string(),
                requests,
                ..Default::default()
            })
            .await
            .map_err(rpc("BatchUpdateBlobs"))?
            .into_inner();
        for response in answer.responses {
            let status = response.status.unwrap_or_default();
            if status.code != 0 {
                let digest = response.digest.unwrap_or_default();
                return Err(RemoteError::Blob {
                    action: "stored",
                    hash: digest.hash,
                    size: digest.size_bytes,
                    code: status.code,
                    message: status.message,
                });
            }
        }
        Ok(())
    }

    /// Stores one blob with a ByteStream write.
    async fn write(&self, digest: &re::Digest, data: &[u8]) -> Result<(), RemoteError> {
        let name = self.resource(&format!("uploads/{}/", uuid::Uuid::new_v4()), digest);
        let mut requests = Vec::new();
        let mut offset = 0;
        for chunk in data.chunks(CHUNK) {
            let end = offset + chunk.len();
            requests.push(bytestream::WriteRequest {
                resource_name: if offset == 0 {
                    name.clone()
                } else {
                    String::new()
                },
                write_offset: i64::try_from(offset).unwrap_or(i64::MAX),
                finish_write: end == data.len(),
                data: chunk.to_vec(),
            });
            offset = end;
        }
        if requests.is_empty() {
            requests.push(bytestream::WriteRequest {
                resource_name: name,
                write_offset: 0,
                finish_write: true,
                data: Vec::new(),
            });
        }
        let answer = bytestream::byte_stream_client::ByteStreamClient::new(self.channel.clone())
            .write(tokio_stream::iter(requests))
            .await
            .map_err(rpc("ByteStream.Write"))?
            .into_inner();
        if answer.committed_size != digest.size_bytes && answer.committed_size != -1 {
            return Err(RemoteError::Protocol(format!(
                "a committed size of {} for a blob of {} bytes",
                answer.committed_size, digest.size_bytes
            )));
        }
        Ok(())
    }

    /// Reads `digests`, by hash and size; small ones in batches, big ones one by one.
    pub(super) async fn read(
        &self,
        digests: &[re::Digest],
    ) -> Result<HashMap<Key, Vec<u8>>, RemoteError> {
        let mut found = HashMap::new();
        let mut batch: Vec<re::Digest> = Vec::new();
        let mut batch_bytes = 0;
        for digest in digests {
            let k = key(digest);
            if found.contains_key(&k) || batch.iter().any(|d| key(d) == k) {
                continue;
            }
            if digest.size_bytes == 0 {
                found.insert(k, Vec::new());
                continue;
            }
            let size = size_of(digest);
            if size.saturating_add(PER_BLOB) > self.batch_limit {
                let data = self.read_stream(digest, usize::MAX).await?;
                found.insert(k, data);
                continue;
            }
            if batch_bytes + size + PER_BLOB > self.batch_limit {
                self.read_batch(std::mem::take(&mut batch), &mut found)
                    .await?;
                batch_bytes = 0;
            }
            batch_bytes += size + PER_BLOB;
            batch.push(digest.clone());
        }
        if !batch.is_empty() {
            self.read_batch(batch, &mut found).await?;
        }
        Ok(found)
    }

    async fn read_batch(
        &self,
        digests: Vec<re::Digest>,
        found: &mut HashMap<Key, Vec<u8>>,
    ) -> Result<(), RemoteError> {
        let answer = self
            .client()
            .batch_read_blobs(re::BatchReadBlobsRequest {
                instance_name: self.instance.to_string(),
                digests,
                ..Default::default()
            })
            .await
            .map_err(rpc("BatchReadBlobs"))?
            .into_inner();
        for response in answer.responses {
            let digest = response.digest.unwrap_or_default();
            let status = response.status.unwrap_or_default();
            if status.code != 0 {
                return Err(RemoteError::Blob {
                    action: "read",
                    hash: digest.hash,
                    size: digest.size_bytes,
                    code: status.code,
                    message: status.message,
                });
            }
            found.insert(key(&digest), response.data);
        }
        Ok(())
    }

    /// Reads one blob, at most `limit` bytes of it.
    pub(super) async fn read_one(
        &self,
        digest: &re::Digest,
        limit: usize,
    ) -> Result<Vec<u8>, RemoteError> {
        if digest.size_bytes == 0 {
            return Ok(Vec::new());
        }
        if size_of(digest) <= limit && size_of(digest).saturating_add(PER_BLOB) <= self.batch_limit
        {
            let mut found = HashMap::new();
            self.read_batch(vec![digest.clone()], &mut found).await?;
            return found.remove(&key(digest)).ok_or_else(|| {
                RemoteError::Protocol(format!("no answer for the blob {}", digest.hash))
            });
        }
        self.read_stream(digest, limit).await
    }

    /// Reads one blob with ByteStream, at most `limit` bytes of it.
    async fn read_stream(&self, digest: &re::Digest, limit: usize) -> Result<Vec<u8>, RemoteError> {
        let read_limit = if limit >= size_of(digest) {
            0
        } else {
            i64::try_from(limit).unwrap_or(0)
        };
        let mut stream =
            bytestream::byte_stream_client::ByteStreamClient::new(self.channel.clone())
                .max_decoding_message_size(usize::MAX)
                .read(bytestream::ReadRequest {
                    resource_name: self.resource("", digest),
                    read_offset: 0,
                    read_limit,
                })
                .await
                .map_err(rpc("ByteStream.Read"))?
                .into_inner();
        let mut data = Vec::new();
        while let Some(part) = stream.message().await.map_err(rpc("ByteStream.Read"))? {
            data.extend_from_slice(&part.data);
            if data.len() >= limit {
                data.truncate(limit);
                break;
            }
        }
        Ok(data)
    }
}
