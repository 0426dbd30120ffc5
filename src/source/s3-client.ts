import { S3Client } from '@aws-sdk/client-s3';

/** Used when neither the options nor the AWS chain (env, profile) name a region. */
export const FALLBACK_REGION = 'us-east-1';

export interface S3ClientOptions {
  /** An S3-compatible store: `https://minio.internal:9000`. Default: AWS S3. */
  readonly endpoint?: string;
  /** Address buckets as `endpoint/bucket/key` (most S3-compatible stores need it). */
  readonly forcePathStyle?: boolean;
  readonly region?: string;
  /** See S3SourceOptions.stallTimeoutMs. */
  readonly stallTimeoutMs: number;
}

/**
 * The client the S3 source builds for itself. Credentials come from the standard AWS chain
 * (env, profile, SSO, web identity, instance role) by leaving them unset.
 *
 * The SDK's own retries are off (maxAttempts 1): the source retries every operation itself
 * with one policy, which also covers what the SDK cannot see (a body that stalls after the
 * headers arrived). Two layers would multiply attempts and make "gave up after N" untrue.
 *
 * Checksums are only computed and validated when an operation requires them: many
 * S3-compatible stores reject or mangle the newer flexible-checksum headers, and the
 * snapshot bytes are verified end to end by the manifest's sha256 anyway.
 */
export function buildS3Client(options: S3ClientOptions): S3Client {
  return new S3Client({
    region: options.region ?? chainRegionOr(FALLBACK_REGION),
    ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
    forcePathStyle: options.forcePathStyle ?? false,
    maxAttempts: 1,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // Reads are watched by the source's stall watchdog at stallTimeoutMs. The socket idle
    // limit is the backstop for what the watchdog cannot see (an upload sends bytes but
    // receives none until it is done); twice as long, so it never races the watchdog.
    requestHandler: { connectionTimeout: options.stallTimeoutMs, socketTimeout: 2 * options.stallTimeoutMs },
  });
}

/**
 * The region of the AWS chain (AWS_REGION, the profile's config), or `fallback` when the
 * chain has none: S3-compatible stores ignore the region but the signer needs one. A
 * throwaway client resolves the chain, so this follows the SDK's rules exactly.
 */
function chainRegionOr(fallback: string): () => Promise<string> {
  let resolved: Promise<string> | null = null;
  return () => {
    resolved ??= (async () => {
      const probe = new S3Client({});
      try {
        return await probe.config.region();
      } catch {
        return fallback;
      } finally {
        probe.destroy();
      }
    })();
    return resolved;
  };
}
