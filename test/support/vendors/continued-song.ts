import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ffmpegBinary } from '../../../src/infra/ffmpeg/ffmpeg-binary.js';

/** A continuation's take: `source` up to `atS` (its own samples, at 44.1 kHz stereo), then `made`; an MP3. */
export function continued(source: Buffer, atS: number, made: Buffer): Buffer {
  const dir = mkdtempSync(path.join(tmpdir(), 'continued-song-'));
  try {
    writeFileSync(path.join(dir, 'source'), source);
    writeFileSync(path.join(dir, 'made.mp3'), made);
    const out = path.join(dir, 'out.mp3');
    const graph = `[0:a]atrim=0:${atS},aresample=44100,aformat=channel_layouts=stereo[a];[1:a]aresample=44100,aformat=channel_layouts=stereo[b];[a][b]concat=n=2:v=0:a=1`;
    execFileSync(ffmpegBinary().path, ['-hide_banner', '-loglevel', 'error', '-i', path.join(dir, 'source'), '-i', path.join(dir, 'made.mp3'), '-filter_complex', graph, '-c:a', 'libmp3lame', '-b:a', '192k', '-y', out]);
    return readFileSync(out);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

