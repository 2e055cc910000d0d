import { Injectable } from '@nestjs/common';
import type { TaskLease } from '../../common/tasks/task-runner.js';
import type { AudioUpload } from '../../generated/prisma/client.js';
import { AppConfig } from '../../infra/config/app-config.js';
import { PrismaService } from '../../infra/prisma/prisma.service.js';
import { type AdmissionSql, insertAdmittedTask, type JobSql, snakeColumns } from '../../infra/prisma/task-insert.js';
import { type InTransaction, TaskTable } from '../../infra/prisma/task-table.js';
import { mediaEndRows, type NewMedia } from '../media/media.repository.js';
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
    this.lease = this.states.lease((id) => this.findById(id), () => this.onChange, (row) => row as AudioUploadRow);
  }

  /** Admits the upload, inserts it, and sends its job, in one statement. */
  async createUpload(
    upload: Pick<AudioUpload, 'id' | 'jobId' | 'owner' | 'slots' | 'credits' | 'baseUrl' | 'url' | 'createdAt' | 'deadlineAt'>,
    admission: AdmissionSql,
    job: JobSql,
  ): Promise<Pick<AudioUpload, 'id'>> {
    return insertAdmittedTask(this.prisma.pool, { table: 'audio_uploads', id: upload.id, columns: snakeColumns({ ...upload, updatedAt: upload.createdAt }), returning: 'id' }, admission, job);
  }

  findForOwner(owner: string, id: string): Promise<AudioUploadRow | null> {
    return this.prisma.audioUpload.findFirst({ where: { id, owner } });
  }

  findById(id: string): Promise<AudioUploadRow | null> {
    return this.prisma.audioUpload.findUnique({ where: { id } });
  }

  /** pending → ready, with the facts and the kept clip's media row (written only when the upload did change). */
  markReady(id: string, worker: string, facts: AudioFacts, media: NewMedia[]): Promise<boolean> {
    return this.states.finish(id, worker, { format: facts.format, duration: facts.duration, size_bytes: facts.sizeBytes, sha256: facts.sha256 }, this.onChange, [mediaEndRows(media)]);
  }
}
