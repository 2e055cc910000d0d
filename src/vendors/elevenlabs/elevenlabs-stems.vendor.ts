import { posix } from 'node:path';
import { Injectable } from '@nestjs/common';
import { unzipSync } from 'fflate';
import { UpstreamClient } from '../../infra/relay/upstream-client.js';
import { bufferReader, sniffAudio } from '../../infra/ffmpeg/media-format.js';
import { MUSIC_FORMATS, type MusicFormat } from '../contracts/music-vendor.js';
import type { StemAudio, StemsAnswer, StemsCreate, StemsModelSpec, StemSplit, StemsVendor } from '../contracts/stems-vendor.js';
import { failedGenerations } from '../contracts/sync-generation.js';
import { UnusableAnswer, type VendorAccount } from '../contracts/vendor.js';
import { ELEVENLABS, elevenlabsRefusal } from './elevenlabs.vendor.js';

/**
 * ElevenLabs' stem separation (its API reference, "Stem Separation"): any audio file it is sent, split by one
 * of its stem variations: `two_stems_v1` (the vocals and the rest) or `six_stems_v1` (its six: vocals, drums,
 * bass, guitar, piano and the rest); MP3 at 44.1 kHz, 128 kbit/s.
 */
export const ELEVENLABS_STEMS_MODELS: readonly StemsModelSpec[] = [
  {
    id: 'stem_separation_v1',
    splits: { two: ['vocals', 'instrumental'], all: ['vocals', 'drums', 'bass', 'guitar', 'piano', 'other'] },
    source: 'any',
    format: 'mp3',
  },
];

/** Its stem variation for each split. */
export const ELEVENLABS_STEM_VARIATIONS: Readonly<Record<StemSplit, string>> = { two: 'two_stems_v1', all: 'six_stems_v1' };

/** What it answers (`output_format`): MP3 at 44.1 kHz, 128 kbit/s, its default and what every plan gets. */
const OUTPUT_FORMAT = 'mp3_44100_128';
/** A ten-minute song's six stems at 128 kbit/s are some 58 MB, zipped about as much. */
const RESULT_MAX_BYTES = 128 * 1024 * 1024;
/** The most stems an archive is read for, and the most a stem's file may hold unpacked (a ZIP's sizes are its own claims). */
const MAX_STEMS = 16;
const MAX_STEM_BYTES = 64 * 1024 * 1024;
/** Its docs warn of high latency, by the audio's length: a long song is given ten minutes. */
const STEMS_TIMEOUT_MS = 600_000;

/** The multipart form of `POST /v1/music/stem-separation`: the clip as `file`, the variation asked. */
export function elevenlabsStemsForm(bytes: Buffer, format: MusicFormat, split: StemSplit): FormData {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(bytes)], { type: `audio/${format === 'mp3' ? 'mpeg' : format}` }), `clip.${format}`);
  form.append('stem_variation_id', ELEVENLABS_STEM_VARIATIONS[split]);
  return form;
}

/**
 * ElevenLabs' stem separation, synchronous: `POST /v1/music/stem-separation?output_format=mp3_44100_128`
 * (multipart: `file`, `stem_variation_id`) answers a ZIP archive of the stems, one audio file each, named by
 * the stem. Its errors are its API's (`elevenlabsRefusal`): 401 its key or its credits, 422 the request, 429
 * busy, 5xx a separation that failed (another channel may take it).
 */
@Injectable()
export class ElevenLabsStemsVendor implements StemsVendor {
  static readonly protocol = ELEVENLABS.protocol;
  static readonly models = ELEVENLABS_STEMS_MODELS;
  readonly protocol = ElevenLabsStemsVendor.protocol;
  readonly models = ELEVENLABS_STEMS_MODELS;
  readonly minPollS = ELEVENLABS.pollFloorS;

  constructor(private readonly client: UpstreamClient) {}

  async create(account: VendorAccount, create: StemsCreate): Promise<StemsAnswer> {
    const clip = await create.source.bytes();
    return failedGenerations(async () => {
      const answer = await this.client.call('POST', `${account.baseUrl}/v1/music/stem-separation?output_format=${OUTPUT_FORMAT}`, {
        form: elevenlabsStemsForm(clip.bytes, clip.format, create.request.split),
        auth: account.auth,
        headers: { accept: 'application/zip, application/octet-stream' },
        failFast: true,
        refusal: elevenlabsRefusal,
        maxBytes: RESULT_MAX_BYTES,
        timeoutMs: STEMS_TIMEOUT_MS,
      });
      return { made: await stemsOfZip(answer.body) };
    });
  }
}

/**
 * The stems in a ZIP archive, one audio file each, named by its file's name without folder or extension
 * (`vocals.mp3` → vocals), in the archive's order; folders and hidden files (`__MACOSX/…`) left out. Anything
 * else (not a ZIP, no audio in it, a file that is not audio, too many or too big) is an unusable answer.
 */
export async function stemsOfZip(body: Buffer): Promise<StemAudio[]> {
  let files: Record<string, Uint8Array>;
  let count = 0;
  try {
    files = unzipSync(new Uint8Array(body.buffer, body.byteOffset, body.length), {
      filter: (file) => {
        if (file.name.endsWith('/') || file.name.split('/').some((part) => part.startsWith('.') || part === '__MACOSX')) return false;
        if (++count > MAX_STEMS) throw new UnusableAnswer(`the upstream's archive holds more than ${MAX_STEMS} files`);
        if (file.originalSize > MAX_STEM_BYTES) throw new UnusableAnswer(`the upstream's archive holds a file of more than ${MAX_STEM_BYTES} bytes (${file.name})`);
        return true;
      },
    });
  } catch (err) {
    if (err instanceof UnusableAnswer) throw err;
    throw new UnusableAnswer(`the upstream's answer is not a ZIP archive of stems (${body.length} bytes: ${(err as Error).message})`);
  }
  const stems: StemAudio[] = [];
  for (const [path, data] of Object.entries(files)) {
    const bytes = Buffer.from(data.buffer, data.byteOffset, data.length);
    const sniff = await sniffAudio(bufferReader(bytes), bytes.length);
    if (!sniff.ok) throw new UnusableAnswer(`the upstream's stem ${posix.basename(path)} ${sniff.reason}`);
    const name = posix.basename(path).replace(/\.[^.]*$/, '').trim() || `stem ${stems.length + 1}`;
    const format = (MUSIC_FORMATS as readonly string[]).includes(sniff.format) ? (sniff.format as MusicFormat) : 'mp3';
    stems.push({ name: name.slice(0, 100), audio: { bytes, format } });
  }
  if (stems.length === 0) throw new UnusableAnswer("the upstream's archive holds no stems");
  return stems;
}
