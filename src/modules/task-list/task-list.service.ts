import { Injectable } from '@nestjs/common';
import type { Viewer } from '../../common/decorators/auth.decorators.js';
import { AppError } from '../../common/errors/app-error.js';
import type { KindDefinition, Task, TaskState } from '../../common/tasks/task-kind.js';
import { TaskLifecycle } from '../../common/tasks/task-lifecycle.js';
import { TaskRepository } from '../../common/tasks/task.repository.js';
import { TaskDoors } from '../../doors/contracts/task-doors.js';
import { AppConfig } from '../../infra/config/app-config.js';
import { CallbacksService } from '../callbacks/callbacks.service.js';
import { ClipsRepository } from '../clips/clips.repository.js';
import type { CallbackListDto } from '../callbacks/dto/callback.dto.js';
import { MediaService } from '../media/media.service.js';
import type { ListTasksQueryDto } from './dto/list-tasks.dto.js';
import type { TaskDetailDto, TaskPageDto, TaskSummaryDto, TaskTimelineEntryDto } from './dto/task-summary.dto.js';
import { decodeCursor, encodeCursor } from './task-cursor.js';
import { type TaskListRow, TaskListRepository } from './task-list.repository.js';
import { askedRequest, requestedModel } from './task-request.js';
import { linkedClipIds, taskClips } from './task-clips.js';

/** Media a streaming image task wrote while it ran (previews, not its result). */
const PARTIAL_ROLE = 'partial';

/**
 * Every operation's tasks in one list (the console's, and any client's): an owner's through one of its
 * keys, every owner's through the admin key. Each task links to its operation's own routes and names its door
 * and model; one task's view adds what it asked (its request), its states' times, its input and result files
 * and its operation's record.
 */
@Injectable()
export class TaskListService {
  constructor(
    private readonly list: TaskListRepository,
    private readonly tasks: TaskRepository,
    private readonly lifecycle: TaskLifecycle,
    private readonly media: MediaService,
    private readonly callbacks: CallbacksService,
    private readonly config: AppConfig,
    private readonly doors: TaskDoors,
    private readonly clips: ClipsRepository,
  ) {}

  async page(viewer: Viewer, query: ListTasksQueryDto): Promise<TaskPageDto> {
    const kinds = this.lifecycle.kinds.map((k) => k.definition.name);
    if (query.kind !== undefined && !kinds.includes(query.kind)) throw new AppError('INVALID_PARAMETER', `kind must be one of ${kinds.join(', ')} (got ${query.kind})`);
    const createdAfter = query.created_after === undefined ? undefined : new Date(query.created_after);
    const createdBefore = query.created_before === undefined ? undefined : new Date(query.created_before);
    if (createdAfter && createdBefore && createdAfter >= createdBefore) throw new AppError('INVALID_PARAMETER', 'created_after must be before created_before');
    let owner = query.owner;
    if (!viewer.admin) {
      if (owner !== undefined && owner !== viewer.owner) throw new AppError('FORBIDDEN', 'owner is an admin filter: an API key sees only its own owner\'s tasks (leave owner out)');
      owner = viewer.owner;
    }
    const rows = await this.list.list({
      owner,
      kind: query.kind,
      state: query.state,
      door: query.door ? { name: query.door, doorKinds: this.doors.kindsDefaultingTo(query.door) } : undefined,
      model: query.model,
      q: query.q,
      createdAfter,
      createdBefore,
      after: query.cursor === undefined ? undefined : decodeCursor(query.cursor)!,
      limit: query.limit + 1,
    });
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    return { tasks: page.map((r) => this.summary(r)), next_cursor: rows.length > query.limit && last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null };
  }

  /**
   * One task: its summary, what it asked, its states' times, its files (signed links on `base`: inputs and results),
   * its clips (music, concat, upload: their words and lineage) and its operation's record.
   */
  async detail(viewer: Viewer, id: string, base: string | undefined): Promise<TaskDetailDto> {
    const task = await this.visible(viewer, id);
    const mediaOf = await this.media.linkedMedia([task]);
    const { media } = mediaOf(task);
    const linkBase = this.config.publicBaseUrl ?? base ?? this.media.linkBase(task.baseUrl);
    const kind = this.lifecycle.kind(task.kind);
    const [record] = await kind.notifications([task]);
    const clips = await this.clips.listForTasks([task.id]);
    const taskOf = await this.clips.taskIdsOf(linkedClipIds(task, clips));
    const inputRoles = kind.definition.request?.inputRoles;
    const isInput = (role: string) => inputRoles !== undefined && new RegExp(inputRoles.source).test(role);
    const files = media
      .filter((m) => m.role !== PARTIAL_ROLE)
      .sort((a, b) => a.role.localeCompare(b.role) || a.index - b.index)
      .map((m) => ({ id: m.id, role: m.role, index: m.index, content_type: m.contentType, size_bytes: Number(m.sizeBytes), url: this.media.signedUrl(m, linkBase) }));
    return {
      ...this.summary({ ...task, credits: task.credits, storedDoor: task.params.door as string | null, model: requestedModel(task.params) }),
      request: askedRequest(task.params, kind.definition),
      timeline: this.timeline(task),
      inputs: files.filter((m) => isInput(m.role)),
      media: files.filter((m) => !isInput(m.role)),
      media_expired: task.mediaExpiredAt !== null,
      clips: taskClips(task, clips, taskOf),
      record: (record ?? {}) as Record<string, unknown>,
    };
  }

  /** Every notification of the task, with every attempt, whatever its operation. */
  async callbackLog(viewer: Viewer, id: string): Promise<CallbackListDto> {
    const task = await this.visible(viewer, id);
    return { deliveries: await this.callbacks.listForTask(task.id) };
  }

  /** The task, when the viewer may see it: the admin any, an owner its own (another's is not found, never forbidden). */
  private async visible(viewer: Viewer, id: string): Promise<Task> {
    const task = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id) ? await this.tasks.findById<Record<string, unknown>, Record<string, unknown>>(id.toLowerCase()) : null;
    if (!task || task.deletedAt !== null || (!viewer.admin && task.owner !== viewer.owner)) {
      throw new AppError('NOT_FOUND', viewer.admin ? `No task ${id}` : `No task ${id} among yours`);
    }
    return task;
  }

  private summary(row: Omit<TaskListRow, 'storedDoor'> & { storedDoor: unknown }): TaskSummaryDto {
    const definition: KindDefinition | undefined = this.lifecycle.kinds.find((k) => k.definition.name === row.kind)?.definition;
    const path = (template: string | undefined) => (template ? template.replaceAll('{id}', row.id) : null);
    return {
      id: row.id,
      kind: row.kind,
      owner: row.owner,
      state: row.state,
      status: definition?.states[row.state] ?? row.state,
      door: this.doors.doorOf(row.kind, row.storedDoor),
      model: row.model,
      external_id: row.externalId,
      created_at: row.createdAt.toISOString(),
      started_at: row.startedAt?.toISOString() ?? null,
      finished_at: row.finishedAt?.toISOString() ?? null,
      message: row.message,
      credits: row.credits,
      record_path: path(definition?.routes?.record),
      callbacks_path: path(definition?.routes?.callbacks),
    };
  }

  /** The states the task went through, from the times its row records. */
  private timeline(task: Task): TaskTimelineEntryDto[] {
    const states = this.lifecycle.kind(task.kind).definition.states;
    const entry = (state: TaskState, at: Date): TaskTimelineEntryDto => ({ state, status: states[state], at: at.toISOString() });
    const entries = [entry('queued', task.createdAt)];
    if (task.startedAt) entries.push(entry('running', task.startedAt));
    if ((task.state === 'succeeded' || task.state === 'failed') && task.finishedAt) entries.push(entry(task.state, task.finishedAt));
    return entries;
  }
}
