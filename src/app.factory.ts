import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module.js';
import { requestIdMiddleware } from './common/middleware/request-id.middleware.js';
import type { AppConfig } from './infra/config/app-config.js';
import { setupSwagger } from './infra/http/openapi.js';
import type { AppLogger } from './infra/logger/app-logger.js';

/**
 * Builds the whole application (the same for `npm start`, the tests and the OpenAPI export):
 * request ids first, then Nest's routes, Swagger UI at /docs.
 * Nest's own body parser is off: JsonBodyMiddleware parses with per-route limits.
 */
export async function createApp(config: AppConfig, logger: AppLogger, options: { preview?: boolean } = {}): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), {
    bodyParser: false,
    logger,
    abortOnError: false,
    preview: options.preview ?? false,
  });
  app.disable('x-powered-by');
  app.use(requestIdMiddleware);
  setupSwagger(app);
  await app.init();
  return app;
}
