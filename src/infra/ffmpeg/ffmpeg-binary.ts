import { execFileSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';

/**
 * Which ffmpeg the service runs, chosen once: FFMPEG_PATH when the operator sets it; else a system ffmpeg
 * (Debian's package, the one the Docker image installs) in /usr/local/bin or /usr/bin; else the binary the
 * @ffmpeg-installer npm package ships inside itself, a static build from December 2018 (ffmpeg 4.1,
 * N-47683-g0e8eb07980): a fallback so `npm install && npm start` works on a machine without ffmpeg, and one
 * the service warns about at start (eight years of demuxer and decoder fixes are missing from it).
 */
export interface FfmpegBinary {
  path: string;
  /** What `ffmpeg -version` says it is ("5.1.9-0+deb12u1", "N-47683-g0e8eb07980-static"). */
  version: string;
  /** Where it came from: the FFMPEG_PATH setting, the system, or the npm package (the 2018 fallback). */
  source: 'setting' | 'system' | 'npm';
}

/** Where a system ffmpeg is looked for, in order. */
export const SYSTEM_FFMPEG_PATHS = ['/usr/local/bin/ffmpeg', '/usr/bin/ffmpeg'];

/** Why FFMPEG_PATH cannot be used: the service does not start with it. */
export class FfmpegUnusable extends Error {}

let chosen: FfmpegBinary | undefined;

/** The ffmpeg every run uses: the one `useFfmpeg` chose at start, or (before that, as in unit tests) the default choice. */
export function ffmpegBinary(): FfmpegBinary {
  chosen ??= chooseFfmpeg(undefined);
  return chosen;
}

/** Chooses the binary (see FfmpegBinary) and makes it the one every run uses; throws FfmpegUnusable when `setting` names one that does not run. */
export function useFfmpeg(setting: string | undefined): FfmpegBinary {
  chosen = chooseFfmpeg(setting);
  return chosen;
}

function chooseFfmpeg(setting: string | undefined): FfmpegBinary {
  if (setting) {
    const version = versionOf(setting);
    if (!version) throw new FfmpegUnusable(`FFMPEG_PATH=${setting} is not an ffmpeg that runs here (\`${setting} -version\` failed); set it to an ffmpeg binary, or unset it to use the system's`);
    return { path: setting, version, source: 'setting' };
  }
  for (const path of SYSTEM_FFMPEG_PATHS) {
    if (!executable(path)) continue;
    const version = versionOf(path);
    if (version) return { path, version, source: 'system' };
  }
  const shipped = shippedFfmpeg();
  return { path: shipped.path, version: shipped.version ?? 'unknown (it does not run)', source: 'npm' };
}

/** The binary the @ffmpeg-installer package ships inside itself (the 2018 static build), and its version when it runs here. */
export function shippedFfmpeg(): { path: string; version: string | undefined } {
  const path = (createRequire(import.meta.url)('@ffmpeg-installer/ffmpeg') as { path: string }).path;
  return { path, version: versionOf(path) };
}

/** What the service logs at start about its ffmpeg: one line, and a loud warning for the 2018 fallback. */
export function describeFfmpeg(binary: FfmpegBinary): { level: 'log' | 'warn'; message: string } {
  if (binary.source !== 'npm') {
    return { level: 'log', message: `ffmpeg ${binary.version} at ${binary.path} (${binary.source === 'setting' ? 'FFMPEG_PATH' : "the system's"})` };
  }
  return {
    level: 'warn',
    message:
      `ffmpeg: no system ffmpeg and no FFMPEG_PATH, so the npm package's build from December 2018 is used (${binary.version} at ${binary.path}). ` +
      'It lacks years of security fixes to the demuxers and decoders that read callers\' audio: install your distribution\'s ffmpeg ' +
      '(Debian/Ubuntu: apt-get install ffmpeg) or set FFMPEG_PATH; the Docker image has Debian\'s.',
  };
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `-version` answers by path, asked once per process (an instance starts in a second; this was a tenth of it). */
const versions = new Map<string, string | undefined>();

function versionOf(path: string): string | undefined {
  if (!versions.has(path)) versions.set(path, askVersion(path));
  return versions.get(path);
}

function askVersion(path: string): string | undefined {
  try {
    const out = execFileSync(path, ['-hide_banner', '-version'], { encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'pipe', 'ignore'] });
    return /^ffmpeg version (\S+)/m.exec(out)?.[1];
  } catch {
    return undefined;
  }
}
