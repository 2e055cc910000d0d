import { randomUUID } from 'node:crypto';
import { mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';

const RUN_PREFIX = 'run-';

/**
 * The service's own scratch space (WORK_DIR, default DATA_DIR/work) for files a step needs on disk
 * (video renders). Each process works in `run-<pid>-<id>/`, removed when the process stops; at start,
 * what a run that died left behind (its process is gone, or it was an earlier life of this very pid, as
 * in a restarted container) is removed. Each file is removed when the step that made it ends.
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
      return Number.isInteger(pid) && (pid === process.pid || !isAlive(pid));
    });
    for (const name of stale) await rm(path.join(this.config.workDir, name), { recursive: true, force: true });
    if (stale.length) this.logger.warn(`removed the work files of ${stale.length} earlier run(s) that did not stop cleanly`);
    await mkdir(this.runDir, { recursive: true });
  }

  async onModuleDestroy(): Promise<void> {
    await rm(this.runDir, { recursive: true, force: true });
  }

  /** A fresh file name in this run's directory (nothing is created). */
  file(prefix: string, ext: string): string {
    return path.join(this.runDir, `${prefix}-${randomUUID()}.${ext}`);
  }

  /** Runs `work` with a fresh file name, and removes the file afterwards, whatever happens. */
  async withFile<T>(prefix: string, ext: string, work: (file: string) => Promise<T>): Promise<T> {
    const file = this.file(prefix, ext);
    try {
      return await work(file);
    } finally {
      await rm(file, { force: true });
    }
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
