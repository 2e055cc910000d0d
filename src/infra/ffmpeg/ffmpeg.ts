import { spawn } from 'node:child_process';
import { StepScope } from '../process/step-scope.js';
import { ffmpegBinary } from './ffmpeg-binary.js';

export interface FfmpegRun {
  /**
   * Wall-clock limit (ms): past it the child is killed (SIGKILL) and the run rejects with FfmpegTimedOut.
   * Every run has one, besides its step's own (StepScope kills the child when the step ends or runs out of time).
   */
  limitMs: number;
  /** Writes to ffmpeg's stdin; resolves when all is written. */
  feed?: (stdin: NodeJS.WritableStream) => Promise<void>;
  /** Collect stdout (for piped output). */
  collectStdout?: boolean;
  /** Reads stdout as it comes (for output streamed elsewhere); its rejection kills the child and rejects the run. */
  read?: (stdout: NodeJS.ReadableStream) => Promise<void>;
}

/**
 * ffmpeg exited with an error. Its message is a sentence without ffmpeg's words; `detail` (its last lines
 * of stderr, which name files by their absolute paths) is for the log only, never for a caller.
 */
export class FfmpegFailed extends Error {
  constructor(
    readonly exitCode: number | null,
    readonly detail: string,
  ) {
    super(`ffmpeg exited with ${exitCode ?? 'a signal'}`);
    this.name = 'FfmpegFailed';
  }
}

/** ffmpeg ran past its run's wall-clock limit and was killed. */
export class FfmpegTimedOut extends Error {
  constructor(readonly limitMs: number) {
    super(`ffmpeg ran past its limit of ${Math.round(limitMs / 100) / 10} s and was stopped`);
    this.name = 'FfmpegTimedOut';
  }
}

/**
 * Input options that pin how ffmpeg reads a file whose bytes a caller or an upstream chose: one demuxer
 * (`-f`, decided from the bytes beforehand), no other (`-format_whitelist`: no playlist or list demuxer can
 * be reached, even from inside it), and the file protocol alone (`-protocol_whitelist`, `file:` prefix: no
 * network, no pipe, no sub-protocol). The mov demuxer's external references (drefs) stay off.
 */
export function pinnedInput(demuxer: string, file: string): string[] {
  return ['-protocol_whitelist', 'file', '-format_whitelist', demuxer, '-f', demuxer, ...(demuxer === 'mov' ? ['-enable_drefs', '0'] : []), '-i', `file:${file}`];
}

/** Runs ffmpeg with `args`; rejects with FfmpegFailed on a non-zero exit, FfmpegTimedOut past `run.limitMs`. */
export function runFfmpeg(args: string[], run: FfmpegRun): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(ffmpegBinary().path, ['-hide_banner', ...(run.feed ? [] : ['-nostdin']), ...args], { stdio: [run.feed ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    const scope = StepScope.current();
    scope?.adopt(child); // killed when the step that runs it ends or runs out of time
    let failure: Error | undefined; // the first reason to stop, reported once the child is gone
    const stop = (reason: Error) => {
      failure ??= reason;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => stop(new FfmpegTimedOut(run.limitMs)), run.limitMs);
    const out: Buffer[] = [];
    let err = '';
    child.stderr!.on('data', (chunk: Buffer) => (err = (err + chunk.toString()).slice(-4000)));
    const reading = run.read ? run.read(child.stdout!).catch((e: unknown) => stop(e as Error)) : undefined;
    if (!run.read) child.stdout!.on('data', (chunk: Buffer) => run.collectStdout && out.push(chunk));
    child.on('error', (e) => stop(e));
    child.on('close', (code) => {
      clearTimeout(timer);
      void Promise.resolve(reading).then(() => {
        if (failure) reject(failure);
        else if (code !== 0 && scope?.signal.aborted) reject(scope.signal.reason); // killed with its step: not the file's fault
        else if (code !== 0) reject(new FfmpegFailed(code, err.trim().split('\n').slice(-3).join(' | ')));
        else resolve(Buffer.concat(out));
      });
    });
    if (run.feed && child.stdin) {
      child.stdin.on('error', () => undefined); // reported through the exit code
      run.feed(child.stdin).then(
        () => child.stdin!.end(),
        (e: unknown) => stop(e as Error),
      );
    }
  });
}

/**
 * Writes `bytes` to a child's stdin (FfmpegRun.feed), waiting, when its buffer is full, until it takes more;
 * rejects if it closes first (the child stopped: its exit says why), instead of waiting for a drain that never comes.
 */
export async function feedTo(stdin: NodeJS.WritableStream, bytes: Uint8Array): Promise<void> {
  if (stdin.write(bytes)) return;
  await new Promise<void>((resolve, reject) => {
    const settle = (closed: boolean) => () => {
      stdin.off('drain', onDrain);
      stdin.off('close', onClose);
      if (closed) reject(new Error('ffmpeg stopped taking input'));
      else resolve();
    };
    const onDrain = settle(false);
    const onClose = settle(true);
    stdin.once('drain', onDrain);
    stdin.once('close', onClose);
  });
}
