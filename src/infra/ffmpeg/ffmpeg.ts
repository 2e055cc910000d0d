import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { StepScope } from '../process/step-scope.js';

/** The ffmpeg binary shipped in the @ffmpeg-installer npm package (its install script is in allowScripts). */
export const FFMPEG_PATH: string = (createRequire(import.meta.url)('@ffmpeg-installer/ffmpeg') as { path: string }).path;

export interface FfmpegRun {
  /** Writes to ffmpeg's stdin; resolves when all is written. */
  feed?: (stdin: NodeJS.WritableStream) => Promise<void>;
  /** Collect stdout (for piped output). */
  collectStdout?: boolean;
}

/** Runs ffmpeg with `args`; rejects with its last words on a non-zero exit. */
export function runFfmpeg(args: string[], run: FfmpegRun = {}): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(FFMPEG_PATH, ['-hide_banner', ...(run.feed ? [] : ['-nostdin']), ...args], { stdio: [run.feed ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    StepScope.current()?.adopt(child); // killed when the step that runs it ends or runs out of time
    const out: Buffer[] = [];
    let err = '';
    child.stdout!.on('data', (chunk: Buffer) => run.collectStdout && out.push(chunk));
    child.stderr!.on('data', (chunk: Buffer) => (err = (err + chunk.toString()).slice(-4000)));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`ffmpeg exited with ${code}: ${err.trim().split('\n').slice(-3).join(' | ')}`))));
    if (run.feed && child.stdin) {
      child.stdin.on('error', () => undefined); // reported through the exit code
      run.feed(child.stdin).then(
        () => child.stdin!.end(),
        (e: unknown) => {
          child.kill('SIGKILL');
          reject(e);
        },
      );
    }
  });
}

/** Duration (s), frame size and codec of a media file, read from ffmpeg's own report. */
export async function probe(file: string): Promise<{ durationS: number; width: number; height: number; codec: string }> {
  const child = spawn(FFMPEG_PATH, ['-hide_banner', '-nostdin', '-i', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  StepScope.current()?.adopt(child);
  let err = '';
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  await new Promise((resolve) => child.on('close', resolve));
  const duration = /Duration: (\d+):(\d+):(\d+(?:\.\d+)?)/.exec(err);
  const video = /Video: (\w+)[^\n]*?, (\d{2,5})x(\d{2,5})/.exec(err);
  if (!duration || !video) throw new Error(`not a video ffmpeg can read: ${err.split('\n').slice(-2).join(' ')}`);
  return {
    durationS: Number(duration[1]) * 3600 + Number(duration[2]) * 60 + Number(duration[3]),
    codec: video[1],
    width: Number(video[2]),
    height: Number(video[3]),
  };
}
