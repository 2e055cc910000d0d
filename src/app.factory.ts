import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module.js';
import { answerClientErrors } from './common/http/client-errors.js';
import { closeSilentConnectionsWhenIdle } from './common/http/silent-connections.js';
import { settleUnreadBody } from './common/http/unread-body.js';
import { requestIdMiddleware } from './common/middleware/request-id.middleware.js';
import { securityHeadersMiddleware } from './common/middleware/security-headers.middleware.js';
import type { AppConfig } from './infra/config/app-config.js';
import { ShutdownState } from './infra/process/shutdown-state.js';
import { Tracing } from './infra/tracing/tracing.service.js';
import { setupSwagger } from './common/swagger/openapi.js';
import type { KindModule } from './common/tasks/task-kind.js';
import { TASK_KIND_MODULES } from './modules/task-kinds.js';
import type { AppLogger } from './infra/logger/app-logger.js';
import type { HostResolver } from './infra/outbound/host-resolver.js';
import { SafeFetchService } from './infra/outbound/safe-fetch.service.js';
import { ConsoleService } from './modules/console/console.service.js';

/**
 * Builds the whole application (the same for `npm start`, the tests and the OpenAPI export):
 * the request's span (with tracing) and id first, then the console's files at /console, Nest's routes, Swagger UI at /docs; malformed HTTP answered with the envelope.
 * Nest's own body parser is off: JsonBodyGuard parses, after the key guard, with per-route limits.
 */
export async function createApp(config: AppConfig, logger: AppLogger, options: { preview?: boolean; kinds?: readonly KindModule[]; hostResolver?: HostResolver } = {}): Promise<NestExpressApplication> {
  const kinds = options.kinds ?? TASK_KIND_MODULES;
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config, kinds, { hostResolver: options.hostResolver }), {
    bodyParser: false,
    logger,
    abortOnError: false,
    preview: options.preview ?? false,
  });
  app.disable('x-powered-by');
  // No ETag on every answer: task records change under the client, and hashing each body costs CPU.
  app.set('etag', false);
  // The client's address (the per-address limit of failed authentications) and protocol (result links)
  // come from X-Forwarded-For and -Proto only when the peer is a trusted proxy (TRUST_PROXY).
  app.set('trust proxy', config.trustProxy);
  const server = app.getHttpServer();
  // Idle keep-alive connections outlive a load balancer's own (60 s on the common ones), so the service never
  // closes one that a client or proxy is about to reuse (a reset request). Node's default is 5 s.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  answerClientErrors(server);
  closeSilentConnectionsWhenIdle(server);
  // With tracing on, a server span per request comes first, so everything after runs in it.
  if (config.tracing && !options.preview) app.use(app.get(Tracing).httpMiddleware());
  // a body still arriving when its answer goes out is dropped or its connection closed with a linger, for every answer
  app.use(settleUnreadBody);
  app.use(requestIdMiddleware);
  app.use(securityHeadersMiddleware);
  const shutdown = app.get(ShutdownState);
  // while draining, each answer closes its connection, so clients reconnect to another instance
  app.use((_req: unknown, res: { setHeader(name: string, value: string): void }, next: () => void) => {
    if (shutdown.draining) res.setHeader('connection', 'close');
    next();
  });
  // The web console's files (no API route of its own: it calls the public API), where the API is served.
  if (config.runsApi) app.use('/console', app.get(ConsoleService).router());
  setupSwagger(app, kinds.map((m) => m.kind.definition), config);
  await app.init();
  if (!options.preview) app.get(SafeFetchService).warnAtStart();
  return app;
}
