import { randomUUID } from 'node:crypto';
import { mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';

const RUN_PREFIX = 'run-';
/** Run directories of this process's live applications (tests start several in one process). */
const LIVE_RUNS = new Set<string>();

/**
 * The service's own scratch space (WORK_DIR, default DATA_DIR/work) for files a step needs on disk
 * (renders, downloads, inputs on their way to a renderer). Each process works in `run-<pid>-<id>/`, removed when the process stops; at start,
 * what a run that died left behind (its process is gone, or it was an earlier life of this very pid, as
 * in a restarted container) is removed. Each file is removed when the step that made it ends (WorkScope).
 */
@Injectable()
export class WorkDirService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('WorkDir');
  readonly runDir: string;

  constructor(private readonly config: AppConfig) {
    this.runDir = path.join(config.workDir, `${RUN_PREFIX}${process.pid}-${randomUUID().slice(0, 8)}`);
  }

  async onModuleInit(): Promise<void> {
    await mkdir(this.config.workDir, { recursive: true });
    const stale = (await readdir(this.config.workDir)).filter((name) => {
      const pid = Number(/^run-(\d+)-/.exec(name)?.[1]);
      return Number.isInteger(pid) && (pid === process.pid ? !LIVE_RUNS.has(name) : !isAlive(pid));
    });
    for (const name of stale) await rm(path.join(this.config.workDir, name), { recursive: true, force: true });
    if (stale.length) this.logger.warn(`removed the work files of ${stale.length} earlier run(s) that did not stop cleanly`);
    await mkdir(this.runDir, { recursive: true });
    LIVE_RUNS.add(path.basename(this.runDir));
  }

  async onModuleDestroy(): Promise<void> {
    LIVE_RUNS.delete(path.basename(this.runDir));
    await rm(this.runDir, { recursive: true, force: true });
  }

  /** Runs `work` with a scope of fresh file names, and removes its files afterwards, whatever happens. */
  async inScope<T>(work: (files: WorkScope) => Promise<T>): Promise<T> {
    const files = new WorkScope(this.runDir);
    try {
      return await work(files);
    } finally {
      await files.clear();
    }
  }
}

/** What a task's step may ask for: a fresh file name in its work files, removed when the step ends (after its results are stored). */
export interface WorkFiles {
  file(prefix: string, ext: string): string;
}

/**
 * The files of one piece of work (a task's step): fresh names in the run's directory, all removed
 * together when the work ends, so a render's output or a download can stay on disk until it is stored.
 */
export class WorkScope implements WorkFiles {
  private readonly files: string[] = [];

  constructor(private readonly dir: string) {}

  /** A fresh file name (nothing is created), removed with the scope. */
  file(prefix: string, ext: string): string {
    const file = path.join(this.dir, `${prefix}-${randomUUID()}.${ext}`);
    this.files.push(file);
    return file;
  }

  async clear(): Promise<void> {
    await Promise.all(this.files.splice(0).map((file) => rm(file, { force: true })));
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // alive, but another user's
  }
}
