import { Injectable } from '@nestjs/common';
import { AppError } from '../../common/errors/app-error.js';
import { Prisma, type ExpandTask } from '../../generated/prisma/client.js';
import { PrismaService } from '../../infra/prisma/prisma.service.js';

export type ExpandTaskRow = ExpandTask;

export interface NewExpandTask {
  id: string;
  owner: string;
  externalTaskId: string | null;
  imageUrl: string | null;
  imageBytes: Buffer | null;
  imageFormat: string | null;
  imageWidth: number | null;
  imageHeight: number | null;
  upRatio: number;
  bottomRatio: number;
  leftRatio: number;
  rightRatio: number;
  prompt: string | null;
  n: number;
  callbackUrl: string | null;
  createdAt: Date;
}

@Injectable()
export class ExpandRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Inserts the task and its decoded image in one statement; a duplicate external_task_id of the owner is a CONFLICT. */
  async createTask(task: NewExpandTask): Promise<ExpandTaskRow> {
    const { imageBytes, ...columns } = task;
    try {
      return await this.prisma.expandTask.create({
        data: { ...columns, updatedAt: task.createdAt, ...(imageBytes ? { input: { create: { bytes: imageBytes as Uint8Array<ArrayBuffer> } } } : {}) },
      });
    } catch (err) {
      if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') {
        throw new AppError('CONFLICT', `external_task_id "${task.externalTaskId}" is already used by another of your tasks`);
      }
      throw err;
    }
  }
}
