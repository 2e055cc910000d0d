import { Injectable, type OnModuleInit } from '@nestjs/common';
import sharp from 'sharp';
import { SAMPLE_FILES, type SampleName } from '../../common/swagger/samples.js';
import { AppConfig } from '../../infra/config/app-config.js';
import { pcm16Wav } from './wav.js';

export interface SampleFile {
  name: SampleName;
  contentType: string;
  bytes: Buffer;
}

/** A hilly landscape under a low sun, as SVG: the keyframe and the photo to expand. */
function landscape(width: number, height: number): Buffer {
  return Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 1280 720">
    <defs><linearGradient id="sky" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#1d3b73"/><stop offset="0.6" stop-color="#f4a259"/><stop offset="1" stop-color="#f7d08a"/></linearGradient></defs>
    <rect width="1280" height="720" fill="url(#sky)"/>
    <circle cx="880" cy="430" r="90" fill="#fff3c4"/>
    <path d="M0 520 C200 430 380 470 560 520 S900 600 1280 480 L1280 720 L0 720 Z" fill="#2f5d50"/>
    <path d="M0 600 C260 540 520 580 760 620 S1100 660 1280 600 L1280 720 L0 720 Z" fill="#1f3f36"/>
  </svg>`);
}

/** Two seconds of a soft chord, 16-bit mono PCM WAV. */
function chord(seconds: number, sampleRate = 22_050): Buffer {
  const samples = Math.round(seconds * sampleRate);
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) {
    const t = i / sampleRate;
    const envelope = Math.min(1, t * 8, (seconds - t) * 4);
    const v = [261.63, 329.63, 392.0].reduce((sum, f) => sum + Math.sin(2 * Math.PI * f * t), 0) / 3;
    data.writeInt16LE(Math.round(9000 * envelope * v), i * 2);
  }
  return pcm16Wav(data, sampleRate);
}

/** The same files for every instance in the process: rendered once (a test run starts hundreds of instances). */
let rendered: Promise<SampleFile[]> | undefined;

async function renderSamples(): Promise<SampleFile[]> {
  const keyframe = await sharp(landscape(1280, 720)).jpeg({ quality: 85 }).toBuffer();
  const photo = await sharp(landscape(640, 480)).resize(640, 480, { fit: 'cover' }).png().toBuffer();
  return [
    { name: 'keyframe.jpg', contentType: 'image/jpeg', bytes: keyframe },
    { name: 'photo.png', contentType: 'image/png', bytes: photo },
    { name: 'clip.wav', contentType: 'audio/wav', bytes: chord(2) },
  ];
}

/**
 * Sample files the service makes at start and serves at /samples/{name}, so that Swagger UI's examples
 * (and anyone trying the API) have an image and a clip to point at, with no network. A task whose URL
 * names one of them under its own base (the base of the request that created it, or PUBLIC_BASE_URL)
 * reads the file from here, without a fetch; any other URL is fetched under the outbound rules.
 */
@Injectable()
export class SamplesService implements OnModuleInit {
  private readonly files = new Map<SampleName, SampleFile>();

  constructor(private readonly config: AppConfig) {}

  async onModuleInit(): Promise<void> {
    for (const file of await (rendered ??= renderSamples())) this.files.set(file.name, file);
  }

  file(name: string): SampleFile | undefined {
    return (SAMPLE_FILES as readonly string[]).includes(name) ? this.files.get(name as SampleName) : undefined;
  }

  /** The bytes of a sample named by `url` under `taskBase` or PUBLIC_BASE_URL; undefined for any other URL. */
  resolve(url: string, taskBase: string | null): Buffer | undefined {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return undefined;
    }
    const match = /^\/samples\/([^/]+)$/.exec(parsed.pathname);
    if (!match || parsed.search) return undefined;
    const origins = [this.config.publicBaseUrl, taskBase].filter((b): b is string => !!b).map((b) => new URL(b).origin);
    return origins.includes(parsed.origin) ? this.file(match[1])?.bytes : undefined;
  }
}
