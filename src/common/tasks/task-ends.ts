import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../../infra/config/app-config.js';
import { NotificationsService } from '../../infra/database/notifications.service.js';
import type { Task } from './task-kind.js';

/** The channel on which an instance tells the others which tasks it has just ended (ids, comma-separated). */
export const TASK_ENDS_CHANNEL = 'mgw_task_ends';
/** Ids per notification: PostgreSQL's payload limit is 8000 bytes, an id and its comma take 37. */
const IDS_PER_NOTIFICATION = 200;
/**
 * Ends heard in the last this many ms are remembered (ids only, at most RECENT_MAX): a wait that starts
 * after its task's end was heard (a door that holds the task it has just submitted, without reading its row
 * first) is woken at once.
 */
const RECENT_MS = 60_000;
const RECENT_MAX = 10_000;
/** Its pace while this instance cannot hear them (the LISTEN connection is down): the row is all there is. */
const UNHEARD_FIRST_MS = 100;
const UNHEARD_MAX_MS = 1000;

/**
 * A task that ended on this instance, as the step left it: its row after the change, and what the step
 * made (the kind's output: the bytes in hand, already stored), so a waiter here answers without reading
 * either back.
 */
export interface EndedHere {
  task: Task<unknown, unknown>;
  output?: unknown;
}

/** What a wait's turn brought: the end in hand (on this instance), word of it (from another), or nothing yet. */
export type Woken = EndedHere | 'heard' | 'timeout';

/** A wait for one task's end, registered before its row is read (so an end between the read and the wait is not missed). */
export interface TaskEndWait {
  /** Resolves when the task is heard to end, or after `ms`, whichever comes first. */
  next(ms: number): Promise<Woken>;
  /** How long to wait before the next read of the row: the safety net's pace (HOLD_RECHECK_S). */
  pauseMs(): number;
  /** Ends the turn in progress (or the next) as if the end were heard: the waiter looks again (its caller left). */
  poke(): void;
  /** No longer waiting: always called (finally). */
  cancel(): void;
}

/**
 * Who waits for a task's end is woken by it, not by the next look at its row: the step that ends a task
 * (or the sweeper, or a delete) announces it here once its transaction has committed. Waiters on this
 * instance are woken directly; the other instances hear it through PostgreSQL NOTIFY on their LISTEN
 * connection, sent on that connection after the commit (never inside the ending transaction: a NOTIFY
 * there would serialize every committing end on PostgreSQL's notify lock), the ids of the ends of one
 * moment in one notification. Should a notification be lost (an instance died between its commit and its
 * NOTIFY, the LISTEN connection was down), the waiter's read of the row every HOLD_RECHECK_S finds the end;
 * and when a lost LISTEN connection is open again, every waiter reads its row at once.
 */
@Injectable()
export class TaskEnds implements OnModuleInit {
  private readonly logger = new Logger('TaskEnds');
  /** Each task's waiters here: each keeps what it hears until its next turn (see wait). */
  private readonly waiters = new Map<string, Set<(ended?: EndedHere) => void>>();
  /** Tasks whose end was heard lately, with when (ms), oldest first. */
  private readonly recent = new Map<string, number>();
  private pending: string[] = [];
  private sending?: Promise<void>;

  constructor(
    private readonly notifications: NotificationsService,
    private readonly config: AppConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    // ends told while this instance could not hear them went unheard: every waiter reads its row once
    this.notifications.whenHeardAgain(() => {
      for (const waiting of this.waiters.values()) for (const listener of waiting) listener();
    });
    await this.notifications.listen(TASK_ENDS_CHANNEL, (payload) => {
      for (const id of payload.split(',')) this.wake(id);
    });
  }

  /** Waiters on this instance now. */
  get waiting(): number {
    return this.waiters.size;
  }

  /**
   * Starts waiting for task `id`'s end: from now on, an end announced or heard is kept for the next turn
   * (`next`), so one that comes between a read of the row and the turn is not missed.
   */
  wait(id: string): TaskEndWait {
    let unheardPause = UNHEARD_FIRST_MS;
    // an end heard before this wait began is word of it: the row is read (once) to learn it
    let kept: EndedHere | 'heard' | undefined = this.endedLately(id) ? 'heard' : undefined;
    let turn: ((woken: Woken) => void) | undefined;
    const listener = (ended?: EndedHere) => {
      // the end in hand wins over word of it
      if (kept === undefined || kept === 'heard') kept = ended ?? 'heard';
      turn?.(kept);
    };
    const set = this.waiters.get(id) ?? new Set();
    set.add(listener);
    this.waiters.set(id, set);
    return {
      next: (ms) =>
        new Promise<Woken>((resolve) => {
          if (kept !== undefined) {
            const woken = kept;
            kept = undefined; // used: the row is read again, and a later turn waits
            return resolve(woken);
          }
          const timer = setTimeout(() => {
            turn = undefined;
            resolve('timeout');
          }, ms);
          turn = (woken) => {
            clearTimeout(timer);
            turn = undefined;
            kept = undefined;
            resolve(woken);
          };
        }),
      pauseMs: () => {
        if (this.notifications.listening) return this.config.holdRecheckS * 1000;
        const pause = unheardPause;
        unheardPause = Math.min(UNHEARD_MAX_MS, Math.round(unheardPause * 1.5));
        return pause;
      },
      poke: () => listener(),
      cancel: () => {
        const waiting = this.waiters.get(id);
        waiting?.delete(listener);
        if (waiting?.size === 0) this.waiters.delete(id);
        turn = undefined;
      },
    };
  }

  /**
   * Tasks `ids` have ended (their change is committed): their waiters here wake now, and the other
   * instances are told (best effort: their waiters' reads of the row are the safety net). `here`: the
   * end of a task this instance's step made, handed to its waiters here.
   *
   * A task is held by one request at most, the one that submitted it (the synchronous doors): an end whose
   * waiter is here is told to no other instance. The others hear only of ends whose holder may be elsewhere,
   * not a NOTIFY per task that every listening instance receives, and this one too.
   */
  announce(ids: readonly string[], here?: EndedHere): void {
    if (ids.length === 0) return;
    for (const id of ids) if (!this.wake(id, here?.task.id === id ? here : undefined)) this.pending.push(id);
    if (this.pending.length > 0) this.sending ??= this.send().finally(() => (this.sending = undefined));
  }

  /** Wakes the task's waiters here; false when it has none. */
  private wake(id: string, here?: EndedHere): boolean {
    const now = Date.now();
    this.recent.delete(id);
    this.recent.set(id, now);
    for (const [old, at] of this.recent) {
      if (at > now - RECENT_MS && this.recent.size <= RECENT_MAX) break;
      this.recent.delete(old);
    }
    const waiting = this.waiters.get(id);
    for (const listener of waiting ?? []) listener(here);
    return waiting !== undefined && waiting.size > 0;
  }

  private endedLately(id: string): boolean {
    const at = this.recent.get(id);
    return at !== undefined && at > Date.now() - RECENT_MS;
  }

  /** Sends what is pending, one notification per IDS_PER_NOTIFICATION ids, until nothing is; ends that come meanwhile go in the next. */
  private async send(): Promise<void> {
    await Promise.resolve(); // the ends of this moment go together
    while (this.pending.length > 0) {
      const ids = this.pending.splice(0, IDS_PER_NOTIFICATION);
      try {
        await this.notifications.notify(TASK_ENDS_CHANNEL, ids.join(','));
      } catch (err) {
        this.logger.debug(`could not tell the other instances of ${ids.length} task end(s): ${String(err)}`);
      }
    }
  }
}
