import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { AppConfig } from '../../infra/config/app-config.js';
import { StorageService } from '../../infra/storage/storage.service.js';
import { consoleSecurityHeaders, originOf } from './console-policy.js';

/** Where `npm run build` puts the console (scripts/build-console.mjs): dist/console, from src/ and from dist/ alike. */
export const CONSOLE_DIR = fileURLToPath(new URL('../../../dist/console', import.meta.url));

/** Vite names the files of assets/ by their content's hash: they never change under their name. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * The web console at /console: the static files Vite built, served by the service itself (no second
 * server), with a strict Content-Security-Policy on every answer. A path that is not a file and has no
 * extension (a deep link such as /console/tasks/<id>) gets index.html, for the console's own router; a
 * missing asset falls through to the API's 404 envelope. The console calls only the public API.
 */
@Injectable()
export class ConsoleService implements OnApplicationBootstrap {
  private readonly logger = new Logger('Console');
  private headers: Record<string, string>;

  constructor(
    private readonly config: AppConfig,
    private readonly storage: StorageService,
  ) {
    this.headers = consoleSecurityHeaders(this.mediaOrigins());
  }

  /** Once the storage drivers are up: the bucket's origin, when /media answers with redirects to it. */
  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.s3 || this.config.mediaDelivery !== 'redirect') return;
    try {
      const probe = await this.storage.driver('s3').presign?.('console-origin-probe', 60, { contentType: 'application/octet-stream', disposition: 'inline' });
      const bucket = originOf(probe);
      if (bucket) this.headers = consoleSecurityHeaders([...this.mediaOrigins(), bucket]);
    } catch (err) {
      this.logger.warn(`the bucket's origin is unknown, so the console cannot show media served by redirect: ${String(err)}`);
    }
  }

  /** Whether the console was built (npm run build); without it /console answers the 404 envelope with how to build it. */
  get built(): boolean {
    return existsSync(path.join(CONSOLE_DIR, 'index.html'));
  }

  /** The handler to mount at /console. */
  router(): Router {
    const router = express.Router({ strict: false });
    router.use((_req: Request, res: Response, next: NextFunction) => {
      for (const [name, value] of Object.entries(this.headers)) res.setHeader(name, value);
      next();
    });
    router.use(
      '/assets',
      express.static(path.join(CONSOLE_DIR, 'assets'), { index: false, redirect: false, fallthrough: true, setHeaders: (res) => res.setHeader('cache-control', IMMUTABLE) }),
    );
    router.use(express.static(CONSOLE_DIR, { index: false, redirect: false, fallthrough: true, setHeaders: (res) => res.setHeader('cache-control', 'no-cache') }));
    router.use((req: Request, res: Response, next: NextFunction) => {
      const last = req.path.split('/').pop() ?? '';
      if ((req.method !== 'GET' && req.method !== 'HEAD') || req.path.startsWith('/assets/') || last.includes('.') || !this.built) return next();
      res.setHeader('cache-control', 'no-cache');
      res.sendFile(path.join(CONSOLE_DIR, 'index.html'));
    });
    return router;
  }

  private mediaOrigins(): string[] {
    return [originOf(this.config.publicBaseUrl)].filter((o): o is string => !!o);
  }
}
