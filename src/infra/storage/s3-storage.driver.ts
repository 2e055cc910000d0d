import { randomUUID } from 'node:crypto';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DeleteObjectCommand, GetObjectCommand, HeadBucketCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { ConfigError, type S3Config } from '../config/app-config.js';
import { type ByteRange, type MediaBody, type Presentation, type StorageDriver, streamOf } from './storage.js';

/**
 * Objects in an S3-compatible bucket (AWS S3, MinIO, R2, GCS interop), under S3_PREFIX. Writes stream
 * as multipart uploads (lib-storage), reads stream from GetObject (with a Range when asked), and links
 * can be presigned so clients fetch from the bucket directly.
 */
export class S3StorageDriver implements StorageDriver {
  readonly name = 's3' as const;
  private readonly client: S3Client;

  constructor(private readonly config: S3Config) {
    this.client = new S3Client({
      region: config.region,
      endpoint: config.endpoint,
      forcePathStyle: config.forcePathStyle,
      credentials: config.accessKeyId && config.secretAccessKey ? { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey } : undefined,
      // checksums only where S3 requires them: several S3-compatible stores reject the SDK's default
      // aws-chunked uploads with trailing checksums
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  async put(key: string, body: MediaBody, contentType: string): Promise<number> {
    if (Buffer.isBuffer(body)) {
      await this.client.send(new PutObjectCommand({ Bucket: this.config.bucket, Key: this.keyOf(key), Body: body, ContentType: contentType, ContentLength: body.length }));
      return body.length;
    }
    let size = 0;
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        size += chunk.length;
        done(null, chunk);
      },
    });
    // parts of 8 MiB, two in flight: at most ~16 MiB of a video in memory however long it is
    const upload = new Upload({ client: this.client, params: { Bucket: this.config.bucket, Key: this.keyOf(key), Body: counted, ContentType: contentType }, partSize: 8 * 1024 * 1024, queueSize: 2 });
    await Promise.all([pipeline(streamOf(body), counted), upload.done()]);
    return size;
  }

  async open(key: string, range?: ByteRange): Promise<Readable | null> {
    try {
      const answer = await this.client.send(new GetObjectCommand({ Bucket: this.config.bucket, Key: this.keyOf(key), Range: range ? `bytes=${range.start}-${range.end}` : undefined }));
      return answer.Body as Readable;
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.config.bucket, Key: this.keyOf(key) }));
  }

  presign(key: string, expiresInS: number, presentation: Presentation): Promise<string> {
    const command = new GetObjectCommand({ Bucket: this.config.bucket, Key: this.keyOf(key), ResponseContentType: presentation.contentType, ResponseContentDisposition: presentation.disposition });
    return getSignedUrl(this.client, command, { expiresIn: Math.max(1, Math.floor(expiresInS)) });
  }

  /** The bucket answers, and a probe object can be written and deleted. */
  async check(): Promise<void> {
    const where = `bucket "${this.config.bucket}"${this.config.endpoint ? ` at ${this.config.endpoint}` : ''}`;
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.config.bucket }));
    } catch (err) {
      throw new ConfigError([`STORAGE_DRIVER=s3: the ${where} cannot be reached or does not exist (${describe(err)}); check S3_BUCKET, S3_ENDPOINT, S3_REGION and the credentials`]);
    }
    const probe = `.probe/${randomUUID()}`;
    try {
      await this.put(probe, Buffer.from('media-gateway start-up check'), 'text/plain');
      await this.delete(probe);
    } catch (err) {
      throw new ConfigError([`STORAGE_DRIVER=s3: the ${where} is not writable with these credentials (${describe(err)})`]);
    }
  }

  close(): void {
    this.client.destroy();
  }

  private keyOf(key: string): string {
    return `${this.config.prefix}${key}`;
  }
}

function isMissing(err: unknown): boolean {
  return err instanceof S3ServiceException && (err.name === 'NoSuchKey' || err.name === 'NotFound' || err.$metadata?.httpStatusCode === 404);
}

function describe(err: unknown): string {
  if (err instanceof S3ServiceException) return `${err.name}${err.$metadata?.httpStatusCode ? `, HTTP ${err.$metadata.httpStatusCode}` : ''}${err.message && err.message !== err.name && err.message !== 'UnknownError' ? `: ${err.message}` : ''}`;
  const cause = (err as { cause?: { code?: string } })?.cause?.code;
  return cause ?? (err instanceof Error ? err.message : String(err));
}
