// Package remote keeps a team's sessions in one bucket of S3-compatible
// object storage: push, pull, list and remove sessions, share a copy made
// for other eyes, and hold one regression suite (its pins and each run's
// shards) for every machine.
//
// The client is the AWS SDK for Go v2's S3 client
// (github.com/aws/aws-sdk-go-v2/service/s3), built from the remote's own
// options alone (no shared AWS config, environment or instance metadata
// is read by it): it speaks to any S3-compatible server (AWS, MinIO, Ceph,
// SeaweedFS, Versity), with path-style addressing, presigned URLs, the
// multipart calls one by one (so an interrupted upload resumes from the
// parts the server holds) and conditional writes (If-Match and
// If-None-Match) for the index. It sends checksums only where S3 requires
// them (a body carries its Content-MD5, never an aws-chunked CRC trailer
// that servers other than AWS may refuse). It replaced minio-go, whose
// package initialisers cost every mecha process about 2 ms at start-up.
//
// # Layout
//
// Under the remote's prefix P:
//
//	P/sessions/ID.jsonl      a session's complete lines, byte for byte, with
//	                         its SHA-256 in the metadata (x-amz-meta-mecha-sha256)
//	P/index.json             every session pushed: id, title, kind, model,
//	                         created, size, SHA-256, lines, when and by whom
//	P/pins.json              the regression suite's pins, in order
//	P/runs/RUN/shard-I-of-N.json   one shard's results of regress run RUN
//	P/shared/TOKEN/ID.jsonl  a shared copy (private text withheld, secrets
//	P/shared/TOKEN/ID.html   redacted) and its page
//
// A session object only ever holds complete lines, and an object appears
// whole or not at all (a single PUT, or a multipart upload completed only
// once every part is in): a pull never sees half a push. A push writes the
// session first and the index after, so the index never claims more than
// the objects hold. Nothing is deleted but by Remove (and the incomplete
// multipart uploads of a push that started over).
//
// No credential is kept by this package beyond the client: errors are
// made of the operation, the remote's name and the server's error code,
// and every credential value is scrubbed from them.
package remote
