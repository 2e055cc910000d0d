import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DeleteObjectsCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
// s3rver ships no types; it is a maintained-enough S3 fake (signatures, multipart, ranges, presigned URLs)
// eslint-disable-next-line @typescript-eslint/ban-ts-comment
// @ts-ignore
import S3rver from 's3rver';

/** An S3-compatible server on a loopback port (s3rver), with one bucket, and the env that points the gateway at it. */
export interface TestS3 {
  url: string;
  bucket: string;
  env: Record<string, string>;
  /** The keys in the bucket (under an optional prefix). */
  keys(prefix?: string): Promise<string[]>;
  /** Empties the bucket. */
  clear(): Promise<void>;
  close(): Promise<void>;
}

export async function startS3(bucket = 'media'): Promise<TestS3> {
  const directory = await mkdtemp(path.join(tmpdir(), 'mgw-s3-'));
  const server = new S3rver({ port: 0, address: '127.0.0.1', directory, silent: true, configureBuckets: [{ name: bucket }] });
  const { port } = (await server.run()) as { port: number };
  const url = `http://127.0.0.1:${port}`;
  // s3rver's own fixed credentials
  const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
  const client = new S3Client({ endpoint: url, region: 'us-east-1', forcePathStyle: true, credentials });
  const keys = async (prefix?: string) => ((await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }))).Contents ?? []).map((o) => o.Key!).sort();
  return {
    url,
    bucket,
    env: { STORAGE_DRIVER: 's3', S3_BUCKET: bucket, S3_ENDPOINT: url, S3_REGION: 'us-east-1', S3_ACCESS_KEY_ID: credentials.accessKeyId, S3_SECRET_ACCESS_KEY: credentials.secretAccessKey, S3_FORCE_PATH_STYLE: 'true' },
    keys,
    clear: async () => {
      const all = await keys();
      if (all.length) await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: all.map((Key) => ({ Key })) } }));
    },
    close: async () => {
      client.destroy();
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
