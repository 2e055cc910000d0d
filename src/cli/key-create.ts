import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { NestFactory } from '@nestjs/core';
import { pino } from 'pino';
import { AppModule } from '../app.module.js';
import { AppValidationPipe } from '../common/validation/app-validation.pipe.js';
import { loadAppConfig } from '../config.js';
import { openDatabase } from '../infra/database/database.js';
import { AppLogger, createRootLogger } from '../infra/logger/app-logger.js';
import { CreateKeyDto } from '../modules/keys/dto/create-key.dto.js';
import { KeysService } from '../modules/keys/keys.service.js';
import { runCli } from './run-cli.js';

/**
 * `npm run key:create -- --owner OWNER --name NAME`: creates a key and prints it as JSON, once: stdout holds
 * that JSON alone (a script reads it), the service's logs (warnings at start, such as the 2018 ffmpeg's) go to
 * stderr.
 */
runCli(async () => {
  const { values } = parseArgs({ options: { owner: { type: 'string' }, name: { type: 'string' } }, strict: true });
  const input = (await new AppValidationPipe().transform(values, { type: 'body', metatype: CreateKeyDto })) as CreateKeyDto;
  const config = loadAppConfig(process.env);
  const root = createRootLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, pino.destination({ dest: 2, sync: true }));
  const db = await openDatabase(config, root);
  const app = await NestFactory.createApplicationContext(AppModule.forRoot(db.config), { logger: new AppLogger(root) });
  try {
    const key = await app.get(KeysService).createKey(input);
    process.stdout.write(`${JSON.stringify(key, null, 2)}\n`);
  } finally {
    await app.close();
    await db.close();
  }
});
