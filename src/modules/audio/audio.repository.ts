import { Injectable } from '@nestjs/common';
import type { TaskLease } from '../../common/tasks/task-runner.js';
import type { AudioUpload } from '../../generated/prisma/client.js';
import { PrismaService } from '../../infra/prisma/prisma.service.js';
import { type SqlExecutor, sqlExecutorOf } from '../../infra/prisma/sql-executor.js';
import { type InTransaction, TaskTable } from '../../infra/prisma/task-table.js';
import type { AudioFacts } from './providers/audio-provider.js';

export type AudioUploadRow = AudioUpload;

@Injectable()
export class AudioRepository {
  /** The guarded state changes: pending → processing → ready | failed. */
  readonly states: TaskTable;
  /** What the task runner uses: claim, heartbeat, release, fail. */
  readonly lease: TaskLease<AudioUploadRow>;
  onChange?: InTransaction;

  constructor(private readonly prisma: PrismaService) {
    this.states = new TaskTable(prisma, { table: 'audio_uploads', status: 'status', waiting: 'pending', processing: 'pending', done: 'ready', message: 'error' });
    this.lease = this.states.lease((id) => this.findById(id), () => this.onChange);
  }

  /** The upload and its job, in one transaction. */
  createUpload(upload: Pick<AudioUpload, 'id' | 'jobId' | 'owner' | 'baseUrl' | 'url' | 'createdAt' | 'deadlineAt'>, enqueue: (db: SqlExecutor, id: string) => Promise<void>): Promise<AudioUploadRow> {
    return this.prisma.$transaction(async (tx) => {
      const row = await tx.audioUpload.create({ data: { ...upload, updatedAt: upload.createdAt } });
      await enqueue(sqlExecutorOf(tx), row.id);
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
