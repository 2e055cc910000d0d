import { Injectable } from '@nestjs/common';
import type { TaskLease } from '../../common/tasks/task-runner.js';
import type { AudioUpload } from '../../generated/prisma/client.js';
import { AppConfig } from '../../infra/config/app-config.js';
import { PrismaService } from '../../infra/prisma/prisma.service.js';
import { sqlExecutorOf } from '../../infra/prisma/sql-executor.js';
import { type AdmitTask, type EnqueueTask, type InTransaction, TaskTable } from '../../infra/prisma/task-table.js';
import type { AudioFacts } from './providers/audio-provider.js';

export type AudioUploadRow = AudioUpload;

@Injectable()
export class AudioRepository {
  /** The guarded state changes: pending → processing → ready | failed. */
  readonly states: TaskTable;
  /** What the task runner uses: claim, heartbeat, release, fail. */
  readonly lease: TaskLease<AudioUploadRow>;
  onChange?: InTransaction;

  constructor(
    private readonly prisma: PrismaService,
    config: AppConfig,
  ) {
    this.states = new TaskTable(prisma, { table: 'audio_uploads', status: 'status', waiting: 'pending', processing: 'pending', done: 'ready', message: 'error', maxRunning: config.maxRunning.audio });
    this.lease = this.states.lease((id) => this.findById(id), () => this.onChange);
  }

  /** Admits the upload, inserts it, and sends its job, in one transaction. */
  createUpload(upload: Pick<AudioUpload, 'id' | 'jobId' | 'owner' | 'slots' | 'credits' | 'baseUrl' | 'url' | 'createdAt' | 'deadlineAt'>, admit: AdmitTask, enqueue: EnqueueTask): Promise<AudioUploadRow> {
    return this.prisma.$transaction(async (tx) => {
      const { priority } = await admit(tx);
      const row = await tx.audioUpload.create({ data: { ...upload, updatedAt: upload.createdAt } });
      await enqueue(sqlExecutorOf(tx), row.id, upload.jobId!, priority);
      return row;
    });
  }

  findForOwner(owner: string, id: string): Promise<AudioUploadRow | null> {
    return this.prisma.audioUpload.findFirst({ where: { id, owner } });
  }

  findById(id: string): Promise<AudioUploadRow | null> {
    return this.prisma.audioUpload.findUnique({ where: { id } });
  }

  markReady(id: string, worker: string, facts: AudioFacts): Promise<boolean> {
    return this.states.finish(id, worker, { format: facts.format, duration: facts.duration, size_bytes: facts.sizeBytes, sha256: facts.sha256 }, this.onChange);
  }
}
