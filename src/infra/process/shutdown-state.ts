import { Global, Injectable, Module } from '@nestjs/common';

/** Whether this instance is draining (SIGTERM received): readiness fails and connections close after their answer. */
@Injectable()
export class ShutdownState {
  private since?: number;

  get draining(): boolean {
    return this.since !== undefined;
  }

  begin(): void {
    this.since ??= Date.now();
  }
}

@Global()
@Module({ providers: [ShutdownState], exports: [ShutdownState] })
export class ProcessModule {}
