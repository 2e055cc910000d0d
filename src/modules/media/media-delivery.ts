import type { Readable } from 'node:stream';
import { AppError } from '../../common/errors/app-error.js';
import type { ByteRange } from '../../infra/storage/storage.js';
import type { MediaRow } from './media.repository.js';

/** The request headers a media answer depends on. */
export interface MediaRequest {
  range?: string;
  ifRange?: string;
  ifNoneMatch?: string;
}

/** What /media/{id} answers: headers, and the bytes for 200 and 206. */
export interface MediaAnswer {
  status: 200 | 206 | 302 | 304 | 416;
  headers: Record<string, string>;
  body?: Readable;
  /** A refusal, answered in the error envelope with these headers (416 and its Content-Range). */
  error?: AppError;
}

/** Strong, and the same on every instance: the row's id, size and time of writing. */
export function etagOf(row: MediaRow): string {
  return `"${row.id}-${row.sizeBytes.toString(36)}-${row.createdAt.getTime().toString(36)}"`;
}

/** `inline`, with a file name that says what it is: `<task id>-<role>-<n>.<ext>`. */
export function dispositionOf(row: MediaRow): string {
  const ext = row.storageKey.split('.').pop();
  return `inline; filename="${row.taskId}-${row.role}-${row.index + 1}.${ext}"`;
}

/**
 * The answer for a stored object of `row.sizeBytes` bytes, per RFC 9110: 304 when If-None-Match names
 * its ETag; 206 with Content-Range for one satisfiable `bytes=` range (If-Range permitting); 416 when
 * the range starts past the end; otherwise 200 with the whole file. Several ranges get the whole file.
 */
export async function answerFor(row: MediaRow, maxAgeS: number, request: MediaRequest, open: (range?: ByteRange) => Promise<Readable>): Promise<MediaAnswer> {
  const etag = etagOf(row);
  const size = row.sizeBytes;
  const common = {
    etag,
    'last-modified': row.createdAt.toUTCString(),
    // the link itself stops working at its expiry: no cache should keep the answer longer
    'cache-control': `private, max-age=${maxAgeS}`,
    'accept-ranges': 'bytes',
  };
  if (request.ifNoneMatch && matches(request.ifNoneMatch, etag)) return { status: 304, headers: common };
  const headers = { ...common, 'content-type': row.contentType, 'content-disposition': dispositionOf(row) };
  const range = request.range && (!request.ifRange || request.ifRange === etag) ? parseRange(request.range, size) : undefined;
  if (range === 'unsatisfiable') {
    return { status: 416, headers: { ...common, 'content-range': `bytes */${size}` }, error: new AppError('RANGE_NOT_SATISFIABLE', `The Range ${request.range} starts past the end of this ${size}-byte file`) };
  }
  if (!range) return { status: 200, headers: { ...headers, 'content-length': String(size) }, body: await open() };
  return {
    status: 206,
    headers: { ...headers, 'content-length': String(range.end - range.start + 1), 'content-range': `bytes ${range.start}-${range.end}/${size}` },
    body: await open(range),
  };
}

function matches(ifNoneMatch: string, etag: string): boolean {
  const bare = (tag: string) => tag.trim().replace(/^W\//, '');
  return ifNoneMatch.trim() === '*' || ifNoneMatch.split(',').some((tag) => bare(tag) === etag);
}

/** One `bytes=` range within `size`; undefined when the header is absent, malformed or asks for several. */
export function parseRange(header: string, size: number): ByteRange | 'unsatisfiable' | undefined {
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (m[2] !== '' && Number(m[2]) < start) return undefined;
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}
