import type { LoggerService } from '@nestjs/common';
import { isSpanContextValid, trace } from '@opentelemetry/api';
import { pino, type Logger } from 'pino';
import type { LogLevel } from '../config/app-config.js';

/** The active span's ids, for a log line (pino's mixin, which merges the line into what it returns): under tracing only. */
function traceIds(): object {
  const span = trace.getActiveSpan()?.spanContext();
  return span && isSpanContextValid(span) ? { trace_id: span.traceId, span_id: span.spanId } : {};
}

/**
 * The process-wide pino logger. A line about a request names it (`request_id`) itself: carrying it
 * implicitly would need an AsyncLocalStorage around each request (on Node.js 20 its promise hooks cost a
 * fifth of the CPU of a request; on 24 it costs about nothing, see docs/contributors/performance.md).
 * With `traceIds` (tracing is on, and its context manager keeps the active span), each line written
 * within a span carries its `trace_id` and `span_id`.
 */
export function createRootLogger(level: LogLevel, destination?: pino.DestinationStream, options: { traceIds?: boolean } = {}): Logger {
  return pino(
    {
      level,
      base: { service: 'media-gateway' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      ...(options.traceIds ? { mixin: traceIds } : {}),
    },
    destination,
  );
}

/** Nest's LoggerService on top of pino, so framework and application logs share one format. */
export class AppLogger implements LoggerService {
  constructor(readonly pino: Logger) {}

  log(message: unknown, ...rest: unknown[]): void {
    this.write('info', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }

  /** Nest passes the context (the class name) last, and for errors a stack before it. */
  private write(level: 'info' | 'error' | 'warn' | 'debug' | 'trace' | 'fatal', message: unknown, rest: unknown[]): void {
    const context = typeof rest[rest.length - 1] === 'string' ? (rest[rest.length - 1] as string) : undefined;
    const stack = level === 'error' && typeof rest[0] === 'string' && rest.length > 1 ? rest[0] : undefined;
    if (message instanceof Error) {
      this.pino[level]({ context, err: message }, message.message);
    } else if (typeof message === 'object' && message !== null) {
      this.pino[level]({ context, ...message });
    } else {
      this.pino[level]({ context, stack }, String(message));
    }
  }
}
