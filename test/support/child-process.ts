import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { TEST_SEALING_KEY } from './sealing-key.js';

/** A child process whose output is collected, with helpers to wait on it within a deadline. */
export class Child {
  /** stdout and stderr, as they came. */
  output = '';
  /** stdout alone. */
  stdout = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(readonly process: ChildProcess) {
    process.stdout?.on('data', (d: Buffer) => {
      this.output += d.toString();
      this.stdout += d.toString();
    });
    process.stderr?.on('data', (d: Buffer) => (this.output += d.toString()));
    this.exited = new Promise((resolve) => process.once('exit', (code, signal) => resolve({ code, signal })));
  }

  /** Runs `script` with `env` alone (and PATH, HOME), and TEST_SEALING_KEY as CHANNEL_SECRET_KEY unless `env` sets one ('' for none). */
  static start(script: string, args: string[], env: Record<string, string>): Child {
    const base: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', CHANNEL_SECRET_KEY: TEST_SEALING_KEY };
    // Node's on-disk cache of compiled modules, for the run: a service's start compiles a quarter less
    if (process.env.TEST_CACHE_DIR) base.NODE_COMPILE_CACHE = path.join(process.env.TEST_CACHE_DIR, 'node-compile-cache');
    return new Child(spawn(process.execPath, [script, ...args], { env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }));
  }

  /** Resolves with the first match of `pattern` in the output; rejects on exit or after `ms`. */
  waitFor(pattern: RegExp, ms = 60_000): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const deadline = Date.now() + ms;
      const check = () => {
        const match = this.output.match(pattern);
        if (match) return resolve(match);
        if (this.process.exitCode !== null || this.process.signalCode !== null) return reject(new Error(`process exited before ${pattern}:\n${this.output}`));
        if (Date.now() > deadline) return reject(new Error(`timed out waiting for ${pattern}:\n${this.output}`));
        setTimeout(check, 50);
      };
      check();
    });
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM', ms = 20_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.process.exitCode === null && this.process.signalCode === null) this.process.kill(signal);
    const timer = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`did not exit within ${ms} ms:\n${this.output}`)), ms).unref());
    return Promise.race([this.exited, timer]);
  }
}
