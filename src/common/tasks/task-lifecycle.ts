import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../../infra/config/app-config.js';
import { Tracing } from '../../infra/tracing/tracing.service.js';
import { type TaskHooks, type TaskKind, type TaskNotification, type TaskState, TASK_HOOKS, TASK_KINDS } from './task-kind.js';
import { TaskRepository } from './task.repository.js';
import type { ChangedRow, ClaimRules, OnChange, SettleSql } from './task-states.repository.js';

/**
 * The kinds the engine drives and what must happen with every state change, written once: the hooks
 * (TaskHooks: notifications, slots and refunds) arrive here through the constructor, so a state change
 * cannot happen without them.
 */
@Injectable()
export class TaskLifecycle {
  private readonly byName: ReadonlyMap<string, TaskKind>;
  /** The final states' bookkeeping as SQL, for an end nobody is notified of (one statement). */
  readonly settle: SettleSql;

  constructor(
    private readonly config: AppConfig,
    private readonly tasks: TaskRepository,
    @Inject(TASK_KINDS) kinds: TaskKind[],
    @Inject(TASK_HOOKS) private readonly hooks: TaskHooks,
    private readonly tracing: Tracing,
  ) {
    this.byName = new Map(kinds.map((k) => [k.definition.name, k]));
    this.settle = { ctes: (s, to) => hooks.settleCtes(s, to), record: (rows, to) => hooks.recordSettled(rows, to) };
  }

  get kinds(): TaskKind[] {
    return [...this.byName.values()];
  }

  kind(name: string): TaskKind {
    const kind = this.byName.get(name);
    if (!kind) throw new Error(`no task kind "${name}" is registered`);
    return kind;
  }

  /** How tasks of the kind are claimed: its upstream cap, and whether starting one is a change its API shows. */
  claimRules(kind: TaskKind): ClaimRules {
    const { states, name } = kind.definition;
    return { maxRunning: this.config.kinds[name]?.maxRunning, notifiesStart: states.queued !== states.running };
  }

  /** Why a task of the kind failed on its deadline. */
  timeoutReason(kind: TaskKind): string {
    return `timed out: the ${kind.definition.noun} did not finish within ${this.config.kinds[kind.definition.name].timeoutS} s`;
  }

  /**
   * In the transaction of every state change: a final state gives back the tasks' slots (and credits when
   * they failed), and each task with a callback_url gets its notification, whose body its kind shapes from
   * the row as the change left it. Starting a task notifies only where the kind's API shows a change.
   */
  readonly onChange: OnChange = async (db, tx, rows, to) => {
    if (to === 'succeeded' || to === 'failed') await this.hooks.settle(tx, rows.map((r) => r.id), to);
    const notifications: TaskNotification[] = [];
    for (const [name, group] of groupByKind(rows.filter((r) => r.notifies))) {
      const kind = this.byName.get(name);
      if (!kind || !this.shows(kind, to)) continue;
      const tasks = await this.tasks.findManyInTx(tx, group.map((r) => r.id));
      const bodies = await kind.notifications(tasks, tx);
      const status = kind.definition.states[to];
      // the step (or request) making the change, when traced; else (a sweep) the trace of the request that created the task
      const traceParent = this.tracing.traceParent();
      tasks.forEach((task, i) => {
        if (task.callbackUrl) notifications.push({ taskId: task.id, kind: name, owner: task.owner, status, url: task.callbackUrl, body: bodies[i], traceParent: traceParent ?? task.traceParent });
      });
    }
    if (notifications.length > 0) await this.hooks.notify(db, tx, notifications);
  };

  private shows(kind: TaskKind, to: TaskState): boolean {
    return to !== 'running' || kind.definition.states.queued !== kind.definition.states.running;
  }
}

export function groupByKind(rows: ChangedRow[]): Map<string, ChangedRow[]> {
  const groups = new Map<string, ChangedRow[]>();
  for (const row of rows) groups.set(row.kind, [...(groups.get(row.kind) ?? []), row]);
  return groups;
}
