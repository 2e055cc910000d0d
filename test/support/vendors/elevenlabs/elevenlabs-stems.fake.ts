import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { zipSync } from 'fflate';
import { ffmpegBinary } from '../../../../src/infra/ffmpeg/ffmpeg-binary.js';
import { sendJson } from '../../http-server.js';

const run = promisify(execFile);

/** Its stem variations (`stem_variation_id`, default six_stems_v1) and the stems each answers, by file name. */
export const STEM_VARIATIONS: Record<string, string[]> = {
  two_stems_v1: ['vocals', 'instrumental'],
  six_stems_v1: ['vocals', 'drums', 'bass', 'guitar', 'piano', 'other'],
};
/** Its output formats the fake makes (MP3 only, as the gateway asks; the rest of its enum answered 422 here). */
const MP3 = /^mp3_(22050|24000|44100)_(32|48|64|96|128|192)$/;

/** One stem separation request, in ElevenLabs' words: the form's fields, the file's name, type and bytes, and the status answered. */
export interface StemsReceived {
  outputFormat: string;
  stemVariationId: string | null;
  file: { name: string; type: string; bytes: Buffer } | null;
  fields: string[];
  status: number;
}

export interface StemsState {
  received: StemsReceived[];
  knobs: { serverError?: number; rateLimited?: number; quotaExceeded?: boolean };
}

/**
 * ElevenLabs' stem separation (its API reference, "Stem Separation"; the SDK's `music.separateStems`): `POST
 * /v1/music/stem-separation?output_format=` (default mp3_44100_128), multipart with `file` (required),
 * `stem_variation_id` (two_stems_v1 or six_stems_v1, default six) and `sign_with_c2pa`; it answers a ZIP archive
 * (application/octet-stream) of one MP3 per stem named by the stem (`vocals.mp3`, …): here each stem is the file
 * decoded and played at 1/n of its level, so the stems played together are the file. Refusals as its API's:
 * 422 `{detail: [{loc, msg, type}]}` for a form its schema refuses (no file, an unknown variation, a file that is
 * not audio), 401 `quota_exceeded`, 429, 500. Answers false (not handled) for any other path.
 */
export async function handleStems(url: URL, method: string, headers: IncomingHttpHeaders, rawBody: Buffer, res: ServerResponse, state: StemsState): Promise<boolean> {
  if (url.pathname !== '/v1/music/stem-separation' || method !== 'POST') return false;
  const outputFormat = url.searchParams.get('output_format') ?? 'mp3_44100_128';
  const entry: StemsReceived = { outputFormat, stemVariationId: null, file: null, fields: [], status: 0 };
  state.received.push(entry);
  const answer = (status: number, send: () => void) => {
    entry.status = status;
    send();
    return true;
  };
  const invalid = (loc: string[], msg: string, type: string) => answer(422, () => sendJson(res, 422, { detail: [{ loc, msg, type }] }));
  const fail = (status: number, code: string, message: string) => answer(status, () => sendJson(res, status, { detail: { status: code, message } }));
  let form: FormData;
  try {
    form = await new Request('http://x/', { method: 'POST', headers: { 'content-type': String(headers['content-type'] ?? '') }, body: new Uint8Array(rawBody) }).formData();
  } catch {
    return invalid(['body'], 'Expected a multipart/form-data body', 'model_attributes_type');
  }
  entry.fields = [...form.keys()];
  const file = form.get('file');
  if (file !== null && typeof file !== 'string') entry.file = { name: file.name, type: file.type, bytes: Buffer.from(await file.arrayBuffer()) };
  const variation = form.get('stem_variation_id');
  entry.stemVariationId = typeof variation === 'string' ? variation : null;
  const { knobs } = state;
  if (knobs.serverError && knobs.serverError > 0) {
    knobs.serverError--;
    return fail(500, 'internal_error', 'An internal server error occurred.');
  }
  if (knobs.rateLimited && knobs.rateLimited > 0) {
    knobs.rateLimited--;
    return fail(429, 'too_many_concurrent_requests', 'Your current subscription is associated with a maximum of 2 concurrent requests and you have exceeded that limit.');
  }
  if (!entry.file) return invalid(['body', 'file'], 'Field required', 'missing');
  const stems = STEM_VARIATIONS[entry.stemVariationId ?? 'six_stems_v1'];
  if (!stems) return invalid(['body', 'stem_variation_id'], `Input should be ${Object.keys(STEM_VARIATIONS).map((v) => `'${v}'`).join(' or ')}`, 'enum');
  const mp3 = MP3.exec(outputFormat);
  if (!mp3) return invalid(['query', 'output_format'], 'The fake makes MP3 stems only', 'enum');
  if (knobs.quotaExceeded) return fail(401, 'quota_exceeded', 'This request exceeds your quota of 10000. You have 0 credits remaining, while 600 credits are required for this request.');
  const dir = await mkdtemp(path.join(tmpdir(), 'fake-stems-'));
  try {
    const input = path.join(dir, 'in');
    await writeFile(input, entry.file.bytes);
    const zip: Record<string, Uint8Array> = {};
    for (const name of stems) {
      const out = path.join(dir, `${name}.mp3`);
      try {
        await run(ffmpegBinary().path, ['-hide_banner', '-loglevel', 'error', '-i', input, '-map', '0:a:0', '-af', `volume=${1 / stems.length}`, '-ar', mp3[1], '-c:a', 'libmp3lame', '-b:a', `${mp3[2]}k`, '-y', out]);
      } catch {
        return invalid(['body', 'file'], 'The file could not be read as audio', 'value_error');
      }
      zip[`${name}.mp3`] = new Uint8Array(await readFile(out));
    }
    const archive = Buffer.from(zipSync(zip, { level: 0 }));
    return answer(200, () => {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': archive.length });
      res.end(archive);
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
