import { Global, Injectable, Module } from '@nestjs/common';
import { CpuSlots } from './cpu-slots.js';

/**
 * Whether this instance is draining (SIGTERM received): readiness fails and connections close after their
 * answer; what registered for it (onDrain) lets go of the work it holds.
 */
@Injectable()
export class ShutdownState {
  private since?: number;
  private readonly listeners: (() => Promise<void>)[] = [];

  get draining(): boolean {
    return this.since !== undefined;
  }

  /** `stop` runs when the drain begins (a poller lets go of its batch), before the workers' tasks are handed back. */
  onDrain(stop: () => Promise<void>): void {
    this.listeners.push(stop);
  }

  /** The drain begins: answers when every listener has let go of what it held. */
  async begin(): Promise<void> {
    if (this.since !== undefined) return;
    this.since = Date.now();
    await Promise.allSettled(this.listeners.map((stop) => stop()));
  }
}

@Global()
@Module({ providers: [ShutdownState, CpuSlots], exports: [ShutdownState, CpuSlots] })
export class ProcessModule {}
