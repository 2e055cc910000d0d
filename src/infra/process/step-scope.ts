import { AsyncLocalStorage } from 'node:async_hooks';
import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';

/** Why a step's scope was closed before its work ended: its time limit passed. */
export class StepTimeLimit extends Error {
  constructor(readonly limitMs: number) {
    super(`the step ran past its time limit (${Math.round(limitMs / 100) / 10} s)`);
    this.name = 'StepTimeLimit';
  }
}

const current = new AsyncLocalStorage<StepScope>();

/**
 * The life of one step of a task, as the code it calls can see it without being handed anything: its
 * abort signal, and the child processes it started. Work started inside `run` (however deep, across every
 * await) belongs to the scope; `close` ends it: the signal aborts, and every child process of the scope
 * still running is killed (SIGKILL), so no decoder or renderer outlives the step that started it, whether
 * the step ended, failed, or ran out of time.
 */
export class StepScope {
  private readonly controller = new AbortController();
  private readonly children = new Set<ChildProcess>();

  /** The scope of the work calling this, if it runs inside one. */
  static current(): StepScope | undefined {
    return current.getStore();
  }

  /** Aborts when the scope closes (the step ended or ran out of time); its reason says why. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Waits `ms`, or until the current step's scope closes (then rejects with its reason); outside a step, simply waits. */
  static delay(ms: number): Promise<void> {
    return sleep(ms, undefined, { signal: StepScope.current()?.signal });
  }

  /** Runs `work` inside the scope. */
  run<T>(work: () => Promise<T>): Promise<T> {
    return current.run(this, work);
  }

  /** A child process that belongs to the scope: killed when the scope closes, at once if it already has. */
  adopt(child: ChildProcess): void {
    if (this.signal.aborted) {
      child.kill('SIGKILL');
      return;
    }
    this.children.add(child);
    child.once('exit', () => this.children.delete(child));
  }

  /** Ends the scope: the signal aborts with `reason`, and its children still running are killed. Safe to call twice. */
  close(reason: unknown = new Error('the step ended')): void {
    if (!this.signal.aborted) this.controller.abort(reason);
    for (const child of this.children) child.kill('SIGKILL');
    this.children.clear();
  }
}
